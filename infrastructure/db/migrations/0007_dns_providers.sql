CREATE TABLE "dns_provider_connections" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"name" text NOT NULL,
	"settings" jsonb NOT NULL,
	"credentials_sealed" text NOT NULL,
	"provider_account" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_verified_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dns_provider_connections_id_account_key" UNIQUE("id","account_id")
);
--> statement-breakpoint
CREATE TABLE "dns_provider_imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"connection_id" uuid NOT NULL,
	"status" text NOT NULL,
	"zones_requested" jsonb,
	"results" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"total" integer,
	"imported" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "dns_provider_writes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"domain_id" bigint,
	"domain_name" text NOT NULL,
	"connection_id" uuid,
	"provider" text NOT NULL,
	"zone" text NOT NULL,
	"zone_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"before" jsonb,
	"after" jsonb NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"actor" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"applied_at" timestamp with time zone,
	"verified_at" timestamp with time zone,
	"rolled_back_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "dns_provider_connections" ADD CONSTRAINT "dns_provider_connections_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_provider_imports" ADD CONSTRAINT "dns_provider_imports_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_provider_imports" ADD CONSTRAINT "dns_provider_imports_connection_fk" FOREIGN KEY ("connection_id","account_id") REFERENCES "public"."dns_provider_connections"("id","account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_provider_writes" ADD CONSTRAINT "dns_provider_writes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_provider_writes" ADD CONSTRAINT "dns_provider_writes_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_provider_writes" ADD CONSTRAINT "dns_provider_writes_connection_id_dns_provider_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."dns_provider_connections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dns_provider_connections_account_id_created_at_index" ON "dns_provider_connections" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "dns_provider_imports_account_id_created_at_index" ON "dns_provider_imports" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "dns_provider_writes_account_id_created_at_index" ON "dns_provider_writes" USING btree ("account_id","created_at");