"""Running self-checking test files (split on `// -----`, check ops, run_parallel)."""
