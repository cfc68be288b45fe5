// The query an aggregation gives the planner: its leading $match stages, merged, and the ones
// the optimizer moves ahead of stages they do not depend on; private to rules/guardrail/.
#pragma once

#include <vector>

#include "docguard/codec/bson_view.h"

namespace docguard::rules::planner {

struct PushedQuery {
  std::vector<codec::BsonView> matches;  // ANDed
  codec::BsonView sort;                  // a $sort among the leading stages
  // A $match stays behind a stage the model does not move it past: the server may still move
  // it (and so find more predicates to use an index for).
  bool later_match = false;
  bool geo_near_first = false;  // $geoNear must be first, and needs a geo index
  // A $lookup, $graphLookup or $unionWith anywhere: their queries of another collection are
  // planned too (under notablescan as well), and the model does not judge them.
  bool foreign_reads = false;
};

PushedQuery push_down(const codec::BsonView& pipeline);

}  // namespace docguard::rules::planner
