"""Text <-> IR: lexer, parser (generic and pretty op forms), printer."""
