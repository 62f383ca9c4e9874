"""The verdict cache: ``keys`` (what decides a verdict, hashed), ``store`` (the on-disk SQLite
store, or what stands in when none opens) and ``verdict_cache`` (the bounded map with its
write-behind queue)."""
