#include "proton/Host/PackedRows.h"

namespace proton::host {

std::vector<AggregateRow>
packAggregates(const std::vector<Aggregate> &aggregates) {
  std::vector<AggregateRow> rows;
  rows.reserve(aggregates.size());
  for (const Aggregate &a : aggregates)
    rows.push_back({a.node,
                    a.name,
                    a.device,
                    uint32_t(a.kind),
                    a.count,
                    a.totalNs,
                    a.minNs,
                    a.maxNs,
                    {a.flops[0], a.flops[1], a.flops[2], a.flops[3]},
                    a.bytes,
                    a.first});
  return rows;
}

std::vector<TraceRowOut> packTrace(const std::vector<TraceRow> &trace) {
  std::vector<TraceRowOut> rows;
  rows.reserve(trace.size());
  for (const TraceRow &t : trace)
    rows.push_back({t.node, t.name, t.device, t.stream, uint32_t(t.kind),
                    t.correlation, t.start, t.end, t.launchNs, t.thread});
  return rows;
}

std::vector<NodeRow> packNodes(const std::vector<CallPathNode> &nodes) {
  std::vector<NodeRow> rows;
  rows.reserve(nodes.size());
  for (const CallPathNode &node : nodes)
    rows.push_back({node.parent, node.name, uint32_t(node.kind)});
  return rows;
}

} // namespace proton::host
