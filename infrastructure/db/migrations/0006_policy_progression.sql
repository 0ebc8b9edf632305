CREATE TABLE "policy_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "policy_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"from_policy" text NOT NULL,
	"from_pct" integer,
	"to_policy" text NOT NULL,
	"to_pct" integer,
	"from_record" text NOT NULL,
	"to_record" text NOT NULL,
	"reason" text NOT NULL,
	"actor" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"applied_at" timestamp with time zone,
	"rolled_back_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "policy_changes" ADD CONSTRAINT "policy_changes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_changes" ADD CONSTRAINT "policy_changes_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "policy_changes_domain_id_created_at_index" ON "policy_changes" USING btree ("domain_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "policy_changes_one_proposal_key" ON "policy_changes" USING btree ("domain_id") WHERE "policy_changes"."status" = 'proposed';