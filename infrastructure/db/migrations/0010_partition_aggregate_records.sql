-- Hand-edited (drizzle-kit cannot express partitioning; it generated only the primary key change).
-- aggregate_records becomes PARTITION BY RANGE (day): one partition a month, named
-- aggregate_records_yYYYYmMM, plus aggregate_records_default for any day without its month's
-- partition, so an insert never fails for lack of one. Later months are created ahead by the
-- maintenance.partitions job, and expired months are dropped whole by retention
-- (infrastructure/repositories/pg-partitions.ts, docs/operations.md "Partitioning and retention").
-- PostgreSQL cannot turn a table into a partitioned one in place: a new table is built, the rows
-- are copied, and the names are swapped, all in the migration's transaction.
CREATE TABLE "aggregate_records_partitioned" (
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "aggregate_records_partitioned_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"report_id" bigint NOT NULL,
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"day" date NOT NULL,
	"source_ip" "inet" NOT NULL,
	"count" integer NOT NULL,
	"disposition" text NOT NULL,
	"dkim_evaluated" text,
	"spf_evaluated" text,
	"reasons" json NOT NULL,
	"header_from" text NOT NULL,
	"envelope_from" text,
	"envelope_to" text,
	"dkim" json NOT NULL,
	"spf" json NOT NULL,
	"dkim_aligned" boolean NOT NULL,
	"spf_aligned" boolean NOT NULL,
	"dmarc_pass" boolean NOT NULL
) PARTITION BY RANGE ("day");
--> statement-breakpoint
CREATE TABLE "aggregate_records_default" PARTITION OF "aggregate_records_partitioned" DEFAULT;
--> statement-breakpoint
-- A partition for every month that holds rows some account still keeps (its end is after today
-- minus the longest record window), up to three months ahead; and the previous, current and next
-- three months in any case. Older or further rows go to the default partition (retention deletes
-- the old ones; the job moves the others out when their month is created).
DO $$
DECLARE
	horizon date := current_date - (
		SELECT coalesce(max(coalesce(s.record_retention_days, 400)), 400)
		FROM accounts a LEFT JOIN account_settings s ON s.account_id = a.id);
	first_month date := (date_trunc('month', current_date) - interval '1 month')::date;
	last_month date := (date_trunc('month', current_date) + interval '3 months')::date;
	m date;
BEGIN
	FOR m IN
		SELECT DISTINCT date_trunc('month', day)::date FROM aggregate_records
		WHERE day >= horizon AND day < last_month + interval '1 month'
		UNION
		SELECT generate_series(first_month, last_month, interval '1 month')::date
	LOOP
		EXECUTE format('CREATE TABLE %I PARTITION OF aggregate_records_partitioned FOR VALUES FROM (%L) TO (%L)',
			'aggregate_records_' || to_char(m, '"y"YYYY"m"MM'), m, (m + interval '1 month')::date);
	END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "aggregate_records_partitioned" ("id", "report_id", "account_id", "domain_id", "day", "source_ip", "count",
	"disposition", "dkim_evaluated", "spf_evaluated", "reasons", "header_from", "envelope_from", "envelope_to", "dkim",
	"spf", "dkim_aligned", "spf_aligned", "dmarc_pass")
OVERRIDING SYSTEM VALUE
SELECT "id", "report_id", "account_id", "domain_id", "day", "source_ip", "count", "disposition", "dkim_evaluated",
	"spf_evaluated", "reasons", "header_from", "envelope_from", "envelope_to", "dkim", "spf", "dkim_aligned",
	"spf_aligned", "dmarc_pass"
FROM "aggregate_records";
--> statement-breakpoint
-- Ids continue where the old sequence stood (not merely after the largest id left).
SELECT setval('"aggregate_records_partitioned_id_seq"', s.last_value, s.is_called) FROM "aggregate_records_id_seq" s;
--> statement-breakpoint
DROP TABLE "aggregate_records";
--> statement-breakpoint
ALTER TABLE "aggregate_records_partitioned" RENAME TO "aggregate_records";
--> statement-breakpoint
ALTER SEQUENCE "aggregate_records_partitioned_id_seq" RENAME TO "aggregate_records_id_seq";
--> statement-breakpoint
-- PostgreSQL 18 (PGlite) names NOT NULL constraints after the table they were created on.
DO $$
DECLARE c record;
BEGIN
	FOR c IN SELECT conname FROM pg_constraint
		WHERE conrelid = 'aggregate_records'::regclass AND conname LIKE 'aggregate\_records\_partitioned\_%'
	LOOP
		EXECUTE format('ALTER TABLE aggregate_records RENAME CONSTRAINT %I TO %I',
			c.conname, replace(c.conname, 'aggregate_records_partitioned_', 'aggregate_records_'));
	END LOOP;
END $$;
--> statement-breakpoint
-- Keys and indexes after the copy (cheaper than maintaining them row by row); on a partitioned
-- table they are partitioned: each partition gets its own, and later partitions get them too.
ALTER TABLE "aggregate_records" ADD CONSTRAINT "aggregate_records_id_day_pk" PRIMARY KEY("id","day");
--> statement-breakpoint
CREATE INDEX "aggregate_records_report_id_index" ON "aggregate_records" USING btree ("report_id");
