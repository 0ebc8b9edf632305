CREATE TABLE "account_settings" (
	"account_id" uuid PRIMARY KEY NOT NULL,
	"redact_forensic" boolean DEFAULT true NOT NULL,
	"raw_retention_days" integer DEFAULT 30 NOT NULL,
	"record_retention_days" integer DEFAULT 400 NOT NULL,
	"forensic_retention_days" integer DEFAULT 90 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aggregate_records" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "aggregate_records_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
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
);
--> statement-breakpoint
CREATE TABLE "aggregate_reports" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "aggregate_reports_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"message_id" uuid,
	"reporter_org" text NOT NULL,
	"reporter_email" text,
	"report_id" text NOT NULL,
	"policy_domain" text NOT NULL,
	"begin_at" timestamp with time zone NOT NULL,
	"end_at" timestamp with time zone NOT NULL,
	"content_hash" text NOT NULL,
	"variant" text NOT NULL,
	"policy" jsonb NOT NULL,
	"errors" jsonb NOT NULL,
	"record_count" integer NOT NULL,
	"message_count" bigint NOT NULL,
	"duplicates_seen" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "daily_domain_totals" (
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"day" date NOT NULL,
	"messages" bigint NOT NULL,
	"dmarc_pass" bigint NOT NULL,
	"dkim_aligned" bigint NOT NULL,
	"spf_aligned" bigint NOT NULL,
	"disposition_none" bigint NOT NULL,
	"disposition_quarantine" bigint NOT NULL,
	"disposition_reject" bigint NOT NULL,
	"disposition_other" bigint NOT NULL,
	"reports" integer NOT NULL,
	CONSTRAINT "daily_domain_totals_domain_id_day_pk" PRIMARY KEY("domain_id","day")
);
--> statement-breakpoint
CREATE TABLE "daily_rollups" (
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"day" date NOT NULL,
	"source_ip" "inet" NOT NULL,
	"disposition" text NOT NULL,
	"dkim_aligned" boolean NOT NULL,
	"spf_aligned" boolean NOT NULL,
	"messages" bigint NOT NULL,
	"reports" integer NOT NULL,
	CONSTRAINT "daily_rollups_domain_id_day_source_ip_disposition_dkim_aligned_spf_aligned_pk" PRIMARY KEY("domain_id","day","source_ip","disposition","dkim_aligned","spf_aligned")
);
--> statement-breakpoint
CREATE TABLE "dkim_selectors_seen" (
	"domain_id" bigint NOT NULL,
	"selector" text NOT NULL,
	"signing_domain" text NOT NULL,
	"last_seen" date NOT NULL,
	"messages" bigint NOT NULL,
	CONSTRAINT "dkim_selectors_seen_domain_id_selector_signing_domain_pk" PRIMARY KEY("domain_id","selector","signing_domain")
);
--> statement-breakpoint
CREATE TABLE "forensic_reports" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "forensic_reports_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"message_id" uuid,
	"content_hash" text NOT NULL,
	"arrival_at" timestamp with time zone,
	"source_ip" "inet",
	"reported_domain" text,
	"auth_failure" text,
	"delivery_result" text,
	"redacted" boolean NOT NULL,
	"report" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ingest_messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"source" text NOT NULL,
	"recipient" text,
	"raw" "bytea",
	"size" integer NOT NULL,
	"sha256" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"quarantine_code" text,
	"quarantine_reason" text,
	"outcome" jsonb,
	"processed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "source_ips" (
	"ip" "inet" PRIMARY KEY NOT NULL,
	"ptr" text,
	"ptr_status" text NOT NULL,
	"checked_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tls_reports" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "tls_reports_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"message_id" uuid,
	"organization" text NOT NULL,
	"report_id" text NOT NULL,
	"begin_at" timestamp with time zone NOT NULL,
	"end_at" timestamp with time zone NOT NULL,
	"success_count" bigint NOT NULL,
	"failure_count" bigint NOT NULL,
	"report" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "weekly_failing_sources" (
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"week" date NOT NULL,
	"source_ip" "inet" NOT NULL,
	"failing" bigint NOT NULL,
	CONSTRAINT "weekly_failing_sources_account_id_week_domain_id_source_ip_pk" PRIMARY KEY("account_id","week","domain_id","source_ip")
);
--> statement-breakpoint
ALTER TABLE "account_settings" ADD CONSTRAINT "account_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "aggregate_reports" ADD CONSTRAINT "aggregate_reports_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "aggregate_reports" ADD CONSTRAINT "aggregate_reports_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "aggregate_reports" ADD CONSTRAINT "aggregate_reports_message_id_ingest_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."ingest_messages"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dkim_selectors_seen" ADD CONSTRAINT "dkim_selectors_seen_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forensic_reports" ADD CONSTRAINT "forensic_reports_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forensic_reports" ADD CONSTRAINT "forensic_reports_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forensic_reports" ADD CONSTRAINT "forensic_reports_message_id_ingest_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."ingest_messages"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_messages" ADD CONSTRAINT "ingest_messages_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tls_reports" ADD CONSTRAINT "tls_reports_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tls_reports" ADD CONSTRAINT "tls_reports_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tls_reports" ADD CONSTRAINT "tls_reports_message_id_ingest_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."ingest_messages"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "aggregate_records_report_id_index" ON "aggregate_records" USING btree ("report_id");--> statement-breakpoint
CREATE UNIQUE INDEX "aggregate_reports_identity_key" ON "aggregate_reports" USING btree ("account_id",lower("reporter_org"),"report_id","policy_domain","begin_at","end_at");--> statement-breakpoint
CREATE UNIQUE INDEX "aggregate_reports_content_key" ON "aggregate_reports" USING btree ("account_id","content_hash");--> statement-breakpoint
CREATE INDEX "aggregate_reports_domain_id_begin_at_index" ON "aggregate_reports" USING btree ("domain_id","begin_at");--> statement-breakpoint
CREATE INDEX "daily_domain_totals_account_id_day_index" ON "daily_domain_totals" USING btree ("account_id","day");--> statement-breakpoint
CREATE INDEX "daily_rollups_failing_idx" ON "daily_rollups" USING btree ("account_id","day","source_ip","messages") WHERE not "daily_rollups"."dkim_aligned" and not "daily_rollups"."spf_aligned";--> statement-breakpoint
CREATE UNIQUE INDEX "forensic_reports_content_key" ON "forensic_reports" USING btree ("account_id","content_hash");--> statement-breakpoint
CREATE INDEX "forensic_reports_domain_id_created_at_index" ON "forensic_reports" USING btree ("domain_id","created_at");--> statement-breakpoint
CREATE INDEX "ingest_messages_account_id_status_received_at_index" ON "ingest_messages" USING btree ("account_id","status","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "tls_reports_identity_key" ON "tls_reports" USING btree ("account_id","domain_id",lower("organization"),"report_id");--> statement-breakpoint
CREATE INDEX "tls_reports_domain_id_begin_at_index" ON "tls_reports" USING btree ("domain_id","begin_at");