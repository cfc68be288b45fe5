// What the rules engine tells the rest of the process about the traffic it inspects, in two
// interfaces because two different readers want it: the counters (what is measured, for
// /metrics) and the design advisor (what a command asks for, to judge the schema). Each is
// passed to the Engine on its own and may be null, so the engine calls only the sinks that
// exist and neither reader implements, or forwards, the other's hooks.
//
// Labels passed here are already bounded: namespaces past tracking.max_namespaces arrive as db
// "_other" / coll "_other", field paths and `from` collections past their bounds as "_other",
// and `app` is the client's app name bounded by tracking.max_apps ("_other" past it, "" for
// none), so both readers name the same apps.
#pragma once

#include <cstdint>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

// The namespace a measurement is about: its labels, and a number that stands for exactly these
// labels for the life of the process (two label pairs never share one; one pair may have
// several). A reader that keeps something per namespace compares the number, not the names.
struct NamespaceLabels {
  std::string_view db;
  std::string_view coll;
  uint64_t id = 0;
};

// The measurements: what the metrics count. Called on the hot path, once or a few times per
// command; an implementation only bumps counters.
class MeasurementSink {
 public:
  virtual ~MeasurementSink();
  virtual void on_command(const NamespaceLabels& /*ns*/, std::string_view /*command*/,
                          std::string_view /*app*/) {}
  // source: "insert", "replace" (replacement updates, upserts, findAndModify) or "read_sample"
  virtual void on_document_size(const NamespaceLabels& /*ns*/, std::string_view /*source*/,
                                double /*bytes*/) {}
  virtual void on_array_length(const NamespaceLabels& /*ns*/, std::string_view /*field*/,
                               double /*length*/) {}
  virtual void on_array_push(const NamespaceLabels& /*ns*/, std::string_view /*field*/,
                             double /*elements*/) {}
  // with_lookup: the read joins ($lookup/$graphLookup anywhere in it), counted once per read.
  virtual void on_read(const NamespaceLabels& /*ns*/, bool /*with_lookup*/,
                       std::string_view /*app*/) {}
  virtual void on_lookup(const NamespaceLabels& /*ns*/, std::string_view /*from*/) {}
  // rule: rule_name() of the violated rule's kind.
  virtual void on_violation(const NamespaceLabels& /*ns*/, std::string_view /*rule*/,
                            Action /*action*/, std::string_view /*app*/) {}
  // The query guardrail could not judge an operation: the namespace's indexes are not known.
  virtual void on_guardrail_unknown(const NamespaceLabels& /*ns*/) {}
  // A candidate rule (candidate_rules) would have warned or blocked: nothing was changed.
  virtual void on_candidate_violation(const NamespaceLabels& /*ns*/, std::string_view /*rule*/,
                                      Action /*would*/, std::string_view /*app*/) {}
  // An operation of a shape no known index serves (the workload ledger's judgement; made
  // whether or not a rule requires an index).
  virtual void on_unindexed_operation(const NamespaceLabels& /*ns*/, std::string_view /*app*/) {}
  // An operator update a $jsonSchema rule could not judge without the stored document.
  virtual void on_schema_unjudged(const NamespaceLabels& /*ns*/) {}
  // A push a tracked array-length bound applies to, onto a document whose array length docguard
  // never saw (not written or read through it, or named by a filter other than its _id): the
  // push alone was judged, the length it makes was not.
  virtual void on_length_unknown(const NamespaceLabels& /*ns*/) {}
  // A write a $jsonSchema rule let through unjudged because it set bypassDocumentValidation.
  virtual void on_schema_bypassed(const NamespaceLabels& /*ns*/, std::string_view /*app*/) {}
};

// What the design advisor reads of the traffic beyond the measurements: the commands
// themselves (filters, projections, pipelines, index and validator definitions), the pushes
// that let an array grow without bound, the reads, and what the catalog commands changed.
class AdviceSink {
 public:
  virtual ~AdviceSink();
  // Every command with a namespace. Called on the hot path: an implementation samples and
  // stays cheap.
  virtual void on_request(std::string_view /*db*/, std::string_view /*coll*/,
                          const codec::CommandView& /*cmd*/, std::string_view /*app*/) {}
  // A $push/$addToSet without $slice: the array grows with every such update.
  virtual void on_unbounded_push(std::string_view /*db*/, std::string_view /*coll*/,
                                 std::string_view /*field*/, double /*elements*/,
                                 std::string_view /*app*/) {}
  // with_lookup: as for MeasurementSink::on_read.
  virtual void on_read(std::string_view /*db*/, std::string_view /*coll*/, bool /*with_lookup*/,
                       std::string_view /*app*/) {}
  // A command that reads or changes the catalog (createIndexes, dropIndexes, collMod, create,
  // drop, dropDatabase, renameCollection, listIndexes, listCollections) and the upstream's
  // successful reply to it, so what is known of indexes and validators follows at once.
  virtual void on_catalog_reply(const codec::CommandView& /*request*/,
                                const codec::BsonView& /*reply*/) {}
};

}  // namespace docguard::rules
