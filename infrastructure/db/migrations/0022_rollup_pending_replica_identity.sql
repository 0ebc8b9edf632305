-- rollup_pending has no key (its COPY of ~100,000 rows a large report pays no index upkeep:
-- docs/ingestion.md, "The per-source rollup merged after the commit"). Without a replica
-- identity, a publication covering it (FOR ALL TABLES: change-data capture, an upgrade by logical
-- replication) would refuse every DELETE of the merge. FULL costs nothing on insert.
ALTER TABLE "rollup_pending" REPLICA IDENTITY FULL;
