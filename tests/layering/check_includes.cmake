# Include rules a compile cannot check, because the headers they name are on the include path
# of the layer that must not use them (system headers, or a layer above it that links the one
# below): run by ctest as `cmake -DSOURCE_DIR=... -P check_includes.cmake`; it fails naming each
# file and include that breaks a rule.
#   * YAML is the settings layer's: no yaml-cpp include outside settings/.
#   * The settings reader (the file and the flags into settings) is called by the settings layer
#     itself, by the program's start (app/main.cc) and by the SIGHUP reload
#     (proxy/app/background_tasks.cc); its YAML entry points by nothing else of the product.
#   * Introspection reports through its sink: no Prometheus include in introspection/.
#   * The proxy uses the advisor through its facades only (kProxyMayUseAdvisor below).
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "pass -DSOURCE_DIR=<the project's source folder>")
endif()

set(product_folders base codec schema rules conversation cluster advisor introspection telemetry settings recording proxy tools app)
set(reader_callers app/main.cc proxy/app/background_tasks.cc)
# The advisor's headers the proxy may include: the live advisor (the engine's AdviceSink, /report)
# and what its reports are made of.
set(proxy_may_use_advisor
    docguard/advisor/live_advisor.h
    docguard/advisor/finding.h
    docguard/advisor/text_format.h
    docguard/advisor/report.h)

list(JOIN reader_callers ", " reader_callers_text)
list(JOIN proxy_may_use_advisor ", " proxy_may_use_advisor_text)
set(violations "")
foreach(folder IN LISTS product_folders)
  file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/${folder}/*.cc ${SOURCE_DIR}/${folder}/*.h)
  foreach(source IN LISTS sources)
    file(STRINGS ${SOURCE_DIR}/${source} includes REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1" header "${line}")
      if(header MATCHES "^yaml-cpp/" AND NOT folder STREQUAL "settings")
        list(APPEND violations "${source}: includes ${header} (YAML is read in settings/ only)")
      endif()
      if(header MATCHES "^docguard/settings/yaml_settings\\.h$" AND NOT folder STREQUAL "settings")
        list(APPEND violations "${source}: includes ${header} (the reader's YAML entry points)")
      endif()
      if(header MATCHES "^docguard/settings/settings_reader\\.h$" AND NOT folder STREQUAL "settings")
        list(FIND reader_callers ${source} allowed)
        if(allowed EQUAL -1)
          list(APPEND violations
               "${source}: includes ${header} (only ${reader_callers_text} call the reader)")
        endif()
      endif()
      if(header MATCHES "^prometheus/" AND folder STREQUAL "introspection")
        list(APPEND violations "${source}: includes ${header} (introspection reports to its sink)")
      endif()
      if(header MATCHES "^docguard/advisor/" AND folder STREQUAL "proxy")
        list(FIND proxy_may_use_advisor ${header} allowed)
        if(allowed EQUAL -1)
          list(APPEND violations
               "${source}: includes ${header} (the proxy may use: ${proxy_may_use_advisor_text})")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "includes against the layers:\n  ${text}")
endif()
message(STATUS "includes follow the layers")
