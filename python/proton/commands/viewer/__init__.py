"""`proton-view`, the terminal viewer of profile trees (proton.viewer's
documentation says what it shows): reading a tree (parsing), its metrics
(derived_metrics), the printed tree (printing), --diff-profile (diff), the
command line (command), and Triton's viewer functions on hatchet GraphFrames
(triton_functions)."""
