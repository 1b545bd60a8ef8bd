"""The task buffer's layout, in 64-bit words (docs/task-buffer-format.md):
the one place both the device side and the host side read it from."""

MAGIC = int.from_bytes(b"PRTNTASK", "little")
HEADER_WORDS = 4  # magic, slots, CTAs, groups
ENTRY_WORDS = 2  # a slot: global timer, (SM id << 32) | (is_start << 31) | task type
START_BIT = 1 << 31
TASK_TYPE_MASK = (1 << 31) - 1
