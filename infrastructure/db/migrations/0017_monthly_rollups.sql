CREATE TABLE "monthly_failing_sources" (
	"account_id" uuid NOT NULL,
	"month" date NOT NULL,
	"domain_id" bigint NOT NULL,
	"source_ip" "inet" NOT NULL,
	"failing" bigint NOT NULL,
	CONSTRAINT "monthly_failing_sources_account_id_month_domain_id_source_ip_pk" PRIMARY KEY("account_id","month","domain_id","source_ip")
);
--> statement-breakpoint
CREATE TABLE "monthly_reporter_counts" (
	"account_id" uuid NOT NULL,
	"month" date NOT NULL,
	"domain_id" bigint NOT NULL,
	"reporter_org" text NOT NULL,
	"ends_on" date NOT NULL,
	"reports" integer NOT NULL,
	"messages" bigint NOT NULL,
	CONSTRAINT "monthly_reporter_counts_pkey" PRIMARY KEY("account_id","month","domain_id","reporter_org","ends_on")
);
--> statement-breakpoint
CREATE TABLE "monthly_rollup_builds" (
	"account_id" uuid NOT NULL,
	"month" date NOT NULL,
	"built_at" timestamp with time zone,
	"stale" boolean NOT NULL,
	CONSTRAINT "monthly_rollup_builds_account_id_month_pk" PRIMARY KEY("account_id","month")
);
--> statement-breakpoint
ALTER TABLE "monthly_rollup_builds" ADD CONSTRAINT "monthly_rollup_builds_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;