CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hosted_records" (
	"name" text PRIMARY KEY NOT NULL,
	"domain_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"txt" text[] DEFAULT '{}'::text[] NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "source_overrides" (
	"domain_id" bigint NOT NULL,
	"source_ip" "inet" NOT NULL,
	"status" text NOT NULL,
	"note" text,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "source_overrides_domain_id_source_ip_pk" PRIMARY KEY("domain_id","source_ip")
);
--> statement-breakpoint
CREATE TABLE "spf_management" (
	"domain_id" bigint PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"label" text NOT NULL,
	"hosted_name" text NOT NULL,
	"config" jsonb NOT NULL,
	"version" integer NOT NULL,
	"activated_at" timestamp with time zone NOT NULL,
	"planned_at" timestamp with time zone NOT NULL,
	CONSTRAINT "spf_management_label_unique" UNIQUE("label"),
	CONSTRAINT "spf_management_hostedName_unique" UNIQUE("hosted_name")
);
--> statement-breakpoint
CREATE TABLE "spf_versions" (
	"domain_id" bigint NOT NULL,
	"version" integer NOT NULL,
	"config" jsonb NOT NULL,
	"records" jsonb NOT NULL,
	"reason" text NOT NULL,
	"actor" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "spf_versions_domain_id_version_pk" PRIMARY KEY("domain_id","version")
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hosted_records" ADD CONSTRAINT "hosted_records_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_overrides" ADD CONSTRAINT "source_overrides_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spf_management" ADD CONSTRAINT "spf_management_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spf_management" ADD CONSTRAINT "spf_management_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spf_versions" ADD CONSTRAINT "spf_versions_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_account_id_created_at_index" ON "audit_log" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "hosted_records_domain_id_index" ON "hosted_records" USING btree ("domain_id");