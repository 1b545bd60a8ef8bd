"""Triton's process-wide state that a profiling session may change (knobs,
hook chains, the profile allocator). Each measurement snapshots it before and
puts back what a session left behind, and reports that as a problem."""


def triton_state():
    """What a profiling session may change in Triton's process-wide state."""
    import triton
    import triton.knobs
    from triton.runtime import _allocation

    rt = triton.knobs.runtime
    state = {
        "compilation.instrumentation_mode": triton.knobs.compilation.instrumentation_mode,
        "runtime.add_stages_inspection_hook": rt.add_stages_inspection_hook,
        "runtime.jit_cache_hook": rt.jit_cache_hook,
        "runtime.jit_post_compile_hook": rt.jit_post_compile_hook,
    }
    for name in ("launch_enter_hook", "launch_exit_hook", "kernel_load_start_hook", "kernel_load_end_hook"):
        chain = getattr(rt, name)
        state["runtime." + name] = list(chain.calls) if hasattr(chain, "calls") else chain
    allocator = _allocation._profile_allocator
    state["profile_allocator"] = allocator.get() if hasattr(allocator, "get") else allocator
    try:
        from triton.backends import backends

        state["nvidia.instrumentation"] = backends["nvidia"].compiler.instrumentation
    except Exception:  # noqa: BLE001
        pass
    return state


def _same(key, a, b):
    if key == "profile_allocator":  # Triton's finalize installs a new NullAllocator()
        return type(a) is type(b) and (type(a).__name__ == "NullAllocator" or a is b)
    if key == "nvidia.instrumentation":  # None before, {} after Triton's finalize: both "off"
        return (not a and not b) or a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b or a == b


def restore_triton_state(saved):
    """Puts back what differs from `saved`; returns the names that differed."""
    import triton
    import triton.knobs
    from triton.runtime import _allocation

    leaked = []
    now = triton_state()
    rt = triton.knobs.runtime
    for key, value in saved.items():
        if _same(key, value, now.get(key)):
            continue
        leaked.append(key)
        if key == "compilation.instrumentation_mode":
            triton.knobs.compilation.instrumentation_mode = value
        elif key.startswith("runtime."):
            name = key.split(".", 1)[1]
            chain = getattr(rt, name)
            if hasattr(chain, "calls") and isinstance(value, list):
                chain.calls[:] = value
            else:
                setattr(rt, name, value)
        elif key == "profile_allocator":
            _allocation.set_profile_allocator(value)
        elif key == "nvidia.instrumentation":
            from triton.backends import backends

            backends["nvidia"].compiler.instrumentation = value
    return leaked
