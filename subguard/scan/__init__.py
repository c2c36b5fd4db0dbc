"""Discovery, parallel extraction, the content cache wiring and the unchanged-run memo fast path.

Kept empty: the memo replay (`scan.runmemo`) must import nothing but the standard library."""
