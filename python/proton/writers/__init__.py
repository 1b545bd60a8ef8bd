"""Output writers for decoded intra-kernel events: Chrome trace JSON, Perfetto
protobuf traces and the per-scope cycle tree (.hatchet)."""
