#include "proton/Host/CallPath.h"

#include <algorithm>
#include <atomic>
#include <sys/syscall.h>
#include <unistd.h>

namespace proton::host {

static uint64_t childKey(uint32_t parent, uint32_t name, NodeKind kind) {
  // Names and nodes stay far below 2^30; the kind takes the top bits.
  return (uint64_t(kind) << 62) | (uint64_t(parent) << 31) | name;
}

CallPathTree::CallPathTree() {
  names_.push_back("ROOT");
  nameIds_.emplace("ROOT", 0);
  nodes_.push_back({kRootNode, 0, NodeKind::Root});
}

uint32_t CallPathTree::intern(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = nameIds_.find(std::string(name));
  if (found != nameIds_.end())
    return found->second;
  uint32_t id = names_.size();
  names_.emplace_back(name);
  nameIds_.emplace(std::string(name), id);
  return id;
}

uint32_t CallPathTree::childLocked(uint32_t parent, uint32_t name,
                                   NodeKind kind) {
  auto [it, inserted] =
      children_.emplace(childKey(parent, name, kind), nodes_.size());
  if (inserted)
    nodes_.push_back({parent, name, kind});
  return it->second;
}

uint32_t CallPathTree::child(uint32_t parent, uint32_t name, NodeKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  return childLocked(parent, name, kind);
}

uint32_t CallPathTree::descend(uint32_t parent, const uint32_t *names,
                               size_t count, NodeKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < count; ++i)
    parent = childLocked(parent, names[i], kind);
  return parent;
}

std::vector<CallPathNode> CallPathTree::nodes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return nodes_;
}

std::vector<std::string> CallPathTree::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_;
}

std::string CallPathTree::name(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return id < names_.size() ? names_[id] : "<unknown>";
}

CallPathNode CallPathTree::node(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return nodes_.at(id);
}

CallPathTree &callPaths() {
  static CallPathTree tree;
  return tree;
}

ThreadContext &threadContext() {
  thread_local ThreadContext context = [] {
    ThreadContext fresh;
    // The system call: glibc's gettid() wrapper is 2.30's, newer than the
    // wheels' glibc 2.28.
    fresh.osThreadId = uint32_t(syscall(SYS_gettid));
    return fresh;
  }();
  return context;
}

// The main thread's innermost scope, for launches from threads that have
// none open (as Triton's Proton attributes autograd's backward kernels).
static std::atomic<uint32_t> mainThreadScope{kRootNode};

static void publishIfMain(const ThreadContext &thread) {
  if (thread.isMain)
    mainThreadScope.store(thread.scopes.back(), std::memory_order_relaxed);
}

void markMainThread() {
  ThreadContext &thread = threadContext();
  thread.isMain = true;
  publishIfMain(thread);
}

uint32_t enterScope(std::string_view name, bool nvtx) {
  ThreadContext &thread = threadContext();
  CallPathTree &tree = callPaths();
  uint32_t node = tree.child(thread.scopes.back(), tree.intern(name),
                             nvtx ? NodeKind::Nvtx : NodeKind::Scope);
  thread.scopes.push_back(node);
  thread.nvtx.push_back(nvtx ? 1 : 0);
  publishIfMain(thread);
  return node;
}

void popNvtxRange() {
  ThreadContext &thread = threadContext();
  if (thread.scopes.size() > 1 && thread.nvtx.back()) {
    thread.scopes.pop_back();
    thread.nvtx.pop_back();
    publishIfMain(thread);
  }
}

std::string exitScope(std::optional<std::string_view> name, uint32_t &node) {
  ThreadContext &thread = threadContext();
  CallPathTree &tree = callPaths();
  while (thread.scopes.size() > 1 && thread.nvtx.back() &&
         !(name && tree.name(tree.node(thread.scopes.back()).name) == *name))
    popNvtxRange();
  std::string what =
      name ? "'" + std::string(*name) + "'" : std::string("(innermost)");
  if (thread.scopes.size() == 1)
    return "exit of scope " + what + " with no scope open on this thread";
  std::string openName = tree.name(tree.node(thread.scopes.back()).name);
  if (name && openName != *name)
    return "exit of scope " + what + " while scope '" + openName +
           "' is the innermost open one";
  node = thread.scopes.back();
  thread.scopes.pop_back();
  thread.nvtx.pop_back();
  publishIfMain(thread);
  return "";
}

std::vector<std::string> scopeStack() {
  const ThreadContext &thread = threadContext();
  std::vector<std::string> names;
  for (size_t i = 1; i < thread.scopes.size(); ++i)
    names.push_back(callPaths().name(callPaths().node(thread.scopes[i]).name));
  return names;
}

std::optional<std::string> setState(std::optional<std::string_view> name) {
  ThreadContext &thread = threadContext();
  std::optional<std::string> previous;
  if (thread.state != kNoName)
    previous = callPaths().name(thread.state);
  thread.state = name ? callPaths().intern(*name) : kNoName;
  thread.stateKernel = kNoName;
  thread.stateIsMetadata = name && *name == kLaunchMetadataScope;
  if (name && name->size() > kLaunchMetadataStatePrefix.size() &&
      name->substr(0, kLaunchMetadataStatePrefix.size()) ==
          kLaunchMetadataStatePrefix) {
    thread.stateIsMetadata = true;
    thread.stateKernel =
        callPaths().intern(name->substr(kLaunchMetadataStatePrefix.size()));
  }
  return previous;
}

void setLaunchMetrics(const double (&flops)[4], double bytes, uint32_t name) {
  LaunchMetrics &metrics = threadContext().pendingMetrics;
  std::copy(flops, flops + 4, metrics.flops);
  metrics.bytes = bytes;
  metrics.name = name;
  metrics.present = true;
}

void clearLaunchMetrics() { threadContext().pendingMetrics = LaunchMetrics{}; }

static std::atomic<bool> launchMetadataPerKernel{false};

void setLaunchMetadataPerKernel(bool perKernel) {
  launchMetadataPerKernel.store(perKernel);
}

LaunchMetadataScope::LaunchMetadataScope(uint32_t kernel)
    : depth(threadContext().scopes.size()),
      wasInLaunchMetadata(threadContext().inLaunchMetadata),
      previousKernel(threadContext().launchMetadataKernel) {
  ThreadContext &thread = threadContext();
  enterScope(kLaunchMetadataScope, false);
  if (kernel != kNoName && launchMetadataPerKernel.load()) {
    thread.scopes.push_back(
        callPaths().child(thread.scopes.back(), kernel, NodeKind::Scope));
    thread.nvtx.push_back(0);
    thread.launchMetadataKernel = kernel;
  } else {
    thread.launchMetadataKernel = kNoName;
  }
  thread.inLaunchMetadata = true;
}

void LaunchMetadataScope::close() {
  if (!open)
    return;
  open = false;
  ThreadContext &thread = threadContext();
  while (thread.scopes.size() > depth) {
    thread.scopes.pop_back();
    thread.nvtx.pop_back();
  }
  publishIfMain(thread);
  thread.inLaunchMetadata = wasInLaunchMetadata;
  thread.launchMetadataKernel = previousKernel;
}

uint32_t graftCaptured(uint32_t launch, uint32_t capture) {
  static std::mutex mutex;
  static std::unordered_map<uint64_t, uint32_t> cache;
  uint64_t key = (uint64_t(launch) << 32) | capture;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = cache.find(key);
    if (found != cache.end())
      return found->second;
  }
  CallPathTree &tree = callPaths();
  std::vector<CallPathNode>
      path; // capture's ancestors below the root, innermost first
  for (uint32_t id = capture; id != kRootNode;) {
    CallPathNode node = tree.node(id);
    path.push_back(node);
    id = node.parent;
  }
  uint32_t node =
      tree.child(launch, tree.intern("<captured_at>"), NodeKind::Captured);
  for (auto it = path.rbegin(); it != path.rend(); ++it)
    node = tree.child(node, it->name, it->kind);
  std::lock_guard<std::mutex> lock(mutex);
  cache[key] = node;
  return node;
}

static std::atomic<ContextCapture> contextCapture{nullptr};

void setContextCapture(ContextCapture capture) {
  contextCapture.store(capture);
}

uint32_t currentLaunchNode() {
  ThreadContext &thread = threadContext();
  uint32_t node = thread.scopes.size() > 1 || thread.isMain
                      ? thread.scopes.back()
                      : mainThreadScope.load(std::memory_order_relaxed);
  if (ContextCapture capture = contextCapture.load(std::memory_order_relaxed)) {
    node = capture(kRootNode);
    if (thread.inLaunchMetadata) {
      node = callPaths().child(node, callPaths().intern(kLaunchMetadataScope),
                               NodeKind::Scope);
      if (thread.launchMetadataKernel != kNoName)
        node = callPaths().child(node, thread.launchMetadataKernel,
                                 NodeKind::Scope);
    }
  }
  return belowState(node);
}

uint32_t belowState(uint32_t node) {
  const ThreadContext &thread = threadContext();
  if (thread.state == kNoName)
    return node;
  CallPathTree &tree = callPaths();
  if (!thread.stateIsMetadata)
    return tree.child(node, thread.state, NodeKind::State);
  node = tree.child(node, tree.intern(kLaunchMetadataScope), NodeKind::Scope);
  if (thread.stateKernel != kNoName)
    node = tree.child(node, thread.stateKernel, NodeKind::Scope);
  return node;
}

} // namespace proton::host
