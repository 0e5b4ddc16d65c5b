"""Running studies: config, plan, chunks, worker pool, stopping rules, verify, bench."""
