// The fixed-layout rows proton._host returns as bytes (numpy.frombuffer in
// python/proton/host/records.py), and their layouts, which the extension
// exports (_host.ROW_LAYOUTS) so that Python builds its dtypes from them
// instead of retyping them. Each row's field table sits next to it; a
// member left out of its table fails to compile (see tiles() below).
#ifndef PROTON_HOST_PACKEDROWS_H
#define PROTON_HOST_PACKEDROWS_H

#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <vector>

namespace proton::host {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the row layouts name little-endian numpy types");

// One field of a row: its name in numpy, numpy scalar type, element count
// (more than 1 for an array), byte offset and size.
struct RowField {
  const char *name;
  const char *type;
  size_t count;
  size_t offset;
  size_t size;
};

// numpy's name for a field's scalar type; a type without one does not compile.
template <typename T> struct NumpyType;
template <> struct NumpyType<uint32_t> {
  static constexpr const char *name = "<u4";
};
template <> struct NumpyType<uint64_t> {
  static constexpr const char *name = "<u8";
};
template <> struct NumpyType<double> {
  static constexpr const char *name = "<f8";
};

// The RowField of `Row::member`, exported as `exported`: type, count,
// offset and size come from the member itself.
#define PROTON_HOST_ROW_FIELD(Row, member, exported)                           \
  RowField {                                                                   \
    exported,                                                                  \
        NumpyType<std::remove_all_extents_t<decltype(Row::member)>>::name,     \
        sizeof(Row::member) /                                                  \
            sizeof(std::remove_all_extents_t<decltype(Row::member)>),          \
        offsetof(Row, member), sizeof(Row::member)                             \
  }

// Whether `fields` cover a row of `size` bytes end to end, in order. The
// rows are packed, so a member missing from the table leaves a gap.
template <size_t N>
constexpr bool tiles(const RowField (&fields)[N], size_t size) {
  size_t end = 0;
  for (const RowField &field : fields) {
    if (field.offset != end)
      return false;
    end += field.size;
  }
  return end == size;
}

#pragma pack(push, 1)
// A session's aggregate per (calling context, kernel or copy name, device,
// kind): ActivityStore's Aggregate.
struct AggregateRow {
  uint32_t node, name, device, kind;
  uint64_t count, totalNs, minNs, maxNs;
  double flops[4]; // flops8, flops16, flops32, flops64
  double bytes;
  uint64_t first; // arrival order of its first activity (process-wide)
};
// One activity of a session's timeline: ActivityStore's TraceRow.
struct TraceRowOut {
  uint32_t node, name, device, stream, kind, correlation;
  uint64_t start, end;
  uint64_t launch; // the launch call's time (0: not known)
  uint32_t thread; // the launching host thread's id
};
// One calling-context node: CallPathNode.
struct NodeRow {
  uint32_t parent, name, kind;
};
#pragma pack(pop)

inline constexpr RowField kAggregateFields[] = {
    PROTON_HOST_ROW_FIELD(AggregateRow, node, "node"),
    PROTON_HOST_ROW_FIELD(AggregateRow, name, "name"),
    PROTON_HOST_ROW_FIELD(AggregateRow, device, "device"),
    PROTON_HOST_ROW_FIELD(AggregateRow, kind, "kind"),
    PROTON_HOST_ROW_FIELD(AggregateRow, count, "count"),
    PROTON_HOST_ROW_FIELD(AggregateRow, totalNs, "total_ns"),
    PROTON_HOST_ROW_FIELD(AggregateRow, minNs, "min_ns"),
    PROTON_HOST_ROW_FIELD(AggregateRow, maxNs, "max_ns"),
    PROTON_HOST_ROW_FIELD(AggregateRow, flops, "flops"),
    PROTON_HOST_ROW_FIELD(AggregateRow, bytes, "bytes"),
    PROTON_HOST_ROW_FIELD(AggregateRow, first, "first"),
};
static_assert(tiles(kAggregateFields, sizeof(AggregateRow)),
              "kAggregateFields must list every AggregateRow member");

inline constexpr RowField kTraceFields[] = {
    PROTON_HOST_ROW_FIELD(TraceRowOut, node, "node"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, name, "name"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, device, "device"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, stream, "stream"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, kind, "kind"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, correlation, "correlation"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, start, "start"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, end, "end"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, launch, "launch"),
    PROTON_HOST_ROW_FIELD(TraceRowOut, thread, "thread"),
};
static_assert(tiles(kTraceFields, sizeof(TraceRowOut)),
              "kTraceFields must list every TraceRowOut member");

inline constexpr RowField kNodeFields[] = {
    PROTON_HOST_ROW_FIELD(NodeRow, parent, "parent"),
    PROTON_HOST_ROW_FIELD(NodeRow, name, "name"),
    PROTON_HOST_ROW_FIELD(NodeRow, kind, "kind"),
};
static_assert(tiles(kNodeFields, sizeof(NodeRow)),
              "kNodeFields must list every NodeRow member");

#undef PROTON_HOST_ROW_FIELD

// Each row type under the name _host.ROW_LAYOUTS gives it.
struct RowLayout {
  const char *name;
  size_t itemsize;
  const RowField *fields;
  size_t count;
};
inline constexpr RowLayout kRowLayouts[] = {
    {"aggregate", sizeof(AggregateRow), kAggregateFields,
     std::size(kAggregateFields)},
    {"trace", sizeof(TraceRowOut), kTraceFields, std::size(kTraceFields)},
    {"node", sizeof(NodeRow), kNodeFields, std::size(kNodeFields)},
};

std::vector<AggregateRow>
packAggregates(const std::vector<Aggregate> &aggregates);
std::vector<TraceRowOut> packTrace(const std::vector<TraceRow> &trace);
std::vector<NodeRow> packNodes(const std::vector<CallPathNode> &nodes);

// The node and activity kinds by number, as _host.NODE_KINDS and
// _host.ACTIVITY_KINDS give them (from the lists that define the enums).
#define PROTON_HOST_KIND_NAME(kind, name) name,
inline constexpr const char *kNodeKindNames[] = {
    PROTON_HOST_NODE_KINDS(PROTON_HOST_KIND_NAME)};
inline constexpr const char *kActivityKindNames[] = {
    PROTON_HOST_ACTIVITY_KINDS(PROTON_HOST_KIND_NAME)};
#undef PROTON_HOST_KIND_NAME

} // namespace proton::host

#endif // PROTON_HOST_PACKEDROWS_H
