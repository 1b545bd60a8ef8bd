// Calling contexts of launches: a tree of interned names (scopes, Python
// frames, state tags) shared by all sessions, and each thread's position in
// it (its scope stack and state tag), read by the launch callback.
#ifndef PROTON_HOST_CALLPATH_H
#define PROTON_HOST_CALLPATH_H

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace proton::host {

// Kinds of calling-context nodes as (enumerator, name in Python), numbered
// from 0 in this order: one list for the enum and for proton._host.NODE_KINDS.
#define PROTON_HOST_NODE_KINDS(X)                                              \
  X(Root, "root")                                                              \
  X(Scope, "scope")                                                            \
  X(Frame, "frame")                                                            \
  X(State, "state")                                                            \
  X(Captured, "captured_at")                                                   \
  X(Nvtx, "nvtx")
#define PROTON_HOST_ENUMERATOR(kind, name) kind,
enum class NodeKind : uint8_t {
  PROTON_HOST_NODE_KINDS(PROTON_HOST_ENUMERATOR)
};
#undef PROTON_HOST_ENUMERATOR

constexpr uint32_t kRootNode = 0;
constexpr uint32_t kNoName = UINT32_MAX;

struct CallPathNode {
  uint32_t parent;
  uint32_t name;
  NodeKind kind;
};

class CallPathTree {
public:
  CallPathTree();
  uint32_t intern(std::string_view name);
  uint32_t child(uint32_t parent, uint32_t name, NodeKind kind);
  // The node for a path of names below `parent`, one lock for all of them.
  uint32_t descend(uint32_t parent, const uint32_t *names, size_t count,
                   NodeKind kind);
  std::vector<CallPathNode> nodes() const;
  std::vector<std::string> names() const;
  std::string name(uint32_t id) const;
  CallPathNode node(uint32_t id) const;

private:
  uint32_t childLocked(uint32_t parent, uint32_t name, NodeKind kind);
  mutable std::mutex mutex_;
  std::vector<CallPathNode> nodes_;
  std::unordered_map<uint64_t, uint32_t>
      children_; // (parent, name, kind) -> node
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> nameIds_;
};

CallPathTree &callPaths();

// Metrics a launch hook attached to the next launch of this thread.
struct LaunchMetrics {
  double flops[4] = {0, 0, 0, 0}; // flops8, flops16, flops32, flops64
  double bytes = 0;
  uint32_t name =
      UINT32_MAX; // launch_metadata's "name", if it renames the kernel
  bool present = false;
};

struct ThreadContext {
  std::vector<uint32_t> scopes{kRootNode}; // the shadow stack, root first
  std::vector<uint8_t> nvtx{0}; // per entry of scopes: pushed by an NVTX range
  uint32_t state = kNoName;     // proton.state tag, kNoName if none
  // A state named "__proton_launch_metadata:<kernel>" (Triton 3.8+'s
  // metadata_state) is two frames: the metadata scope, then <kernel>.
  // The bare scope name as a state (metadata_state()) is that one frame.
  bool stateIsMetadata = false;
  uint32_t stateKernel = kNoName;
  LaunchMetrics pendingMetrics;
  // Inside a launch hook's launch_metadata call: context="python" puts its
  // kernels below "__proton_launch_metadata" too (no scope stack there).
  bool inLaunchMetadata = false;
  uint32_t launchMetadataKernel = kNoName; // its kernel frame, if per kernel
  // The program's main thread publishes its innermost scope for threads
  // with none of their own (autograd's backward thread, workers).
  bool isMain = false;
  // The kernel's id of this thread (gettid once, not a syscall per launch).
  uint32_t osThreadId = 0;
  // The profiler's own work on the GPU (moving a graph replay's metric sums
  // after the replay): its launches, copies and sets are in no session.
  bool profilerWork = false;
};

ThreadContext &threadContext();

// Marks the calling thread as the program's main thread: launches from
// threads with no open scope of their own go below its innermost scope.
void markMainThread();

// Opens a scope (or an NVTX range) on this thread's stack; returns its node.
uint32_t enterScope(std::string_view name, bool nvtx);
// Closes this thread's innermost NVTX range, if the innermost entry is one.
void popNvtxRange();
// Closes this thread's innermost scope, which must be `name` when one is
// given; NVTX ranges still open above it are closed first. Sets `node` to
// the closed scope's node and returns "", or returns why nothing was closed.
std::string exitScope(std::optional<std::string_view> name, uint32_t &node);
// The names of this thread's open scopes and NVTX ranges, outermost first.
std::vector<std::string> scopeStack();

// Sets this thread's state tag (none: clears it); returns the previous one.
std::optional<std::string> setState(std::optional<std::string_view> name);
// `node` with this thread's state below it (itself when no state is set).
uint32_t belowState(uint32_t node);

// The scope launch_metadata functions run in, and the prefix of states that
// stand for it and a kernel (Triton 3.8+).
inline constexpr std::string_view kLaunchMetadataScope =
    "__proton_launch_metadata";
inline constexpr std::string_view kLaunchMetadataStatePrefix =
    "__proton_launch_metadata:";
// Whether a launch hook's metadata scope has the launching kernel's frame
// below it (Triton 3.8+ shows it so; 3.6 and 3.7 do not).
void setLaunchMetadataPerKernel(bool perKernel);

// Attaches metrics to this thread's next kernel launch (a launch hook's
// result): flops8..flops64, bytes, and `name` renaming the launch (kNoName:
// it keeps the kernel's own).
void setLaunchMetrics(const double (&flops)[4], double bytes, uint32_t name);
void clearLaunchMetrics();

// The scope a launch hook evaluates launch_metadata in: kernels that the
// function itself launches go below "__proton_launch_metadata" (viewers leave
// that frame out), not among the user's. Closed, with anything the function
// left open inside it, at close() or destruction.
class LaunchMetadataScope {
public:
  // `kernel`: the launching kernel's name id (kNoName if unknown).
  explicit LaunchMetadataScope(uint32_t kernel);
  ~LaunchMetadataScope() { close(); }
  void close();

private:
  size_t depth;
  bool wasInLaunchMetadata;
  uint32_t previousKernel;
  bool open = true;
};

// The node `capture` (a graph's capture context) grafted below `launch`
// (where the graph was launched): launch / "<captured_at>" / capture's path.
uint32_t graftCaptured(uint32_t launch, uint32_t capture);

// Returns the calling-context node of a launch made now on this thread,
// below `base`; installed for context="python" (walks the Python stack).
using ContextCapture = uint32_t (*)(uint32_t base);
void setContextCapture(ContextCapture capture);

// The node a launch made now on this thread belongs to (scopes or Python
// frames, then the state tag); every tracer's launch callback asks it.
uint32_t currentLaunchNode();

} // namespace proton::host

#endif // PROTON_HOST_CALLPATH_H
