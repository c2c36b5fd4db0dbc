"""The org-wide audit on Spark: `job` (the only I/O, `main(argv)`), `transforms` (pure DataFrame ->
DataFrame), `tasks` (what runs inside a task: the same scan and engine as `subguard check`),
`sources` (SOURCE kinds and inventory files), `summary` and `report_html` (the outputs)."""
