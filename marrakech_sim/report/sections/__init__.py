"""The report's sections, one module each: each computes its tables into `ReportTables`."""
