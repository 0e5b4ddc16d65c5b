"""The report's sections, one module each (`base.Section`): totals, tables, words, charts."""
