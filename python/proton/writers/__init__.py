"""Outputs and how they are written: Chrome trace JSON, Perfetto protobuf
traces and the profile tree (.hatchet, and as MessagePack: msgpack_codec) of
decoded events, for instrumentation and host sessions alike; the SVG
timeline of a trace (timeline_svg); the rules every output and input
follows (files); progress of long writes on the terminal (progress)."""
