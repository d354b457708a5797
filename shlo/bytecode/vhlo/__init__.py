"""The VHLO dialect: versioned StableHLO, the content of portable artifacts."""
