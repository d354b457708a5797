"""MLIR bytecode <-> IR, and StableHLO portable artifacts (VHLO bytecode of every version)."""
