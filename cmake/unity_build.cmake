# Unity builds for CI's sanitizer builds (scripts/test.sh passes -DCMAKE_UNITY_BUILD=ON to
# them; the release build, whose binary the instruction guard counts, stays file by file): each
# target's sources are compiled in batches, one translation unit per batch, so the headers they
# share (libbson, Asio, spdlog, the layers' own) are parsed once per batch instead of once per
# file. A developer's build is unchanged (CMAKE_UNITY_BUILD is off by default) and is the one
# that proves each file includes what it uses.
#
# A batch is one translation unit: two files of one target whose file-local names (an anonymous
# namespace's or a static helper, a namespace-scope constant) are the same cannot share it. Such
# a file is compiled on its own (SKIP_UNITY_BUILD_INCLUSION) rather than renamed. The list is
# checked with every target in one batch (CMAKE_UNITY_BUILD_BATCH_SIZE=0), so that a batch
# boundary moving when a file is added cannot bring two of them together.
#
# The layering cases (tests/layering) compile one file each and stay out of unity builds.

# docguard_unity_exclude(TARGET FILE...): FILE (relative to the project) is compiled on its own.
function(docguard_unity_exclude target)
  if(NOT TARGET ${target})
    return()
  endif()
  list(TRANSFORM ARGN PREPEND ${PROJECT_SOURCE_DIR}/)
  set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

# kMaxDepth (each walk's own bound): one of them stays in the batch.
docguard_unity_exclude(docguard_rules rules/guardrail/shape_text.cc
                       rules/guardrail/filter_predicates.cc rules/workload/workload_shape.cc)
docguard_unity_exclude(docguard_schema schema/schema_compile.cc
                       # title_description(): its own beside schema_explain_out.h's
                       schema/schema_update.cc)
# number(): limit_forecasts.cc has one of the same signature.
docguard_unity_exclude(docguard_advisor advisor/src/reports/render_html.cc)
# Not a name: GCC's -Wsubobject-linkage on a coroutine frame holding a lambda, which it reports
# only for code outside the main file, as every source of a batch is.
docguard_unity_exclude(docguard_proxy proxy/session/session_upstream.cc)
# Harness: session_failover_test.cc has its own.
docguard_unity_exclude(proxy_tests tests/unit/proxy/session/session_timeout_test.cc)
# error_of(): op_msg_test.cc has its own.
docguard_unity_exclude(codec_tests tests/unit/codec/op_msg_trace_context_test.cc)

# Test executables whose files share many helper names (request builders, fixtures, settings):
# each file's anonymous namespace holds a namespace of its own, DOCGUARD_UNITY_ID, which CMake
# names after the file in a batch (UNITY_BUILD_UNIQUE_ID), so two files' helpers of one name are
# two names there too. Compiled file by file, the file is its own translation unit and one name
# serves every file.
foreach(t IN ITEMS advisor_tests conversation_tests rules_tests)
  if(TARGET ${t})
    set_target_properties(${t} PROPERTIES UNITY_BUILD_UNIQUE_ID DOCGUARD_UNITY_ID)
  endif()
endforeach()

# The release build of scripts/test.sh compiles the product file by file (the binary the
# instruction guard counts, and the proof that each file includes what it uses) and its unit
# test executables in batches: they are a third of that build's compile time, and nothing counts
# or ships their code.
option(DOCGUARD_UNITY_TESTS "Unit test executables in unity batches, the product file by file" OFF)
if(DOCGUARD_UNITY_TESTS AND NOT CMAKE_UNITY_BUILD)
  foreach(t IN ITEMS advisor_tests app_tests base_tests cluster_tests codec_tests conversation_tests
            introspection_tests proxy_tests recording_tests rules_tests schema_tests settings_tests
            telemetry_tests tools_tests)
    if(TARGET ${t})
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
    endif()
  endforeach()
endif()

# File by file, DOCGUARD_UNITY_ID is one name for every file (see above). After the option, which
# may have made these executables unity builds.
foreach(t IN ITEMS advisor_tests conversation_tests rules_tests)
  if(TARGET ${t})
    get_target_property(unity ${t} UNITY_BUILD)
    if(NOT unity)
      target_compile_definitions(${t} PRIVATE DOCGUARD_UNITY_ID=file_local)
    endif()
  endif()
endforeach()
