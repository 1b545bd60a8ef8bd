"""What the sessions of both profilers share, below them: the options
proton.start builds once and hands to a session (options), the modes
(modes: proton.mode's objects), the interface the session API drives
(interface), the hooks sessions install (hooks), where outputs go (paths)
and the switch that turns profiling off (disable)."""
