CREATE TABLE "alert_mail_queue" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"alert_id" uuid NOT NULL,
	"change" text NOT NULL,
	"queued_at" timestamp with time zone NOT NULL,
	"mailed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "digest_runs" (
	"account_id" uuid NOT NULL,
	"frequency" text NOT NULL,
	"local_date" date NOT NULL,
	"enqueued_at" timestamp with time zone NOT NULL,
	CONSTRAINT "digest_runs_account_id_frequency_local_date_pk" PRIMARY KEY("account_id","frequency","local_date")
);
--> statement-breakpoint
CREATE TABLE "mail_suppressions" (
	"account_id" uuid NOT NULL,
	"recipient" text NOT NULL,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"detail" text,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "mail_suppressions_account_id_recipient_kind_pk" PRIMARY KEY("account_id","recipient","kind")
);
--> statement-breakpoint
CREATE TABLE "mail_unsubscribe_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"recipient" text NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "alert_mail_queue" ADD CONSTRAINT "alert_mail_queue_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_mail_queue" ADD CONSTRAINT "alert_mail_queue_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "digest_runs" ADD CONSTRAINT "digest_runs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_suppressions" ADD CONSTRAINT "mail_suppressions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_unsubscribe_tokens" ADD CONSTRAINT "mail_unsubscribe_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alert_mail_queue_alert_id_change_index" ON "alert_mail_queue" USING btree ("alert_id","change");--> statement-breakpoint
CREATE INDEX "alert_mail_queue_waiting" ON "alert_mail_queue" USING btree ("account_id") WHERE "alert_mail_queue"."mailed_at" is null;--> statement-breakpoint
CREATE INDEX "mail_unsubscribe_tokens_created_at_index" ON "mail_unsubscribe_tokens" USING btree ("created_at");