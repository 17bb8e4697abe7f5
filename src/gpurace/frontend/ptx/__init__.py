"""PTX text to module IR: lexer, parser and the IR data types."""
