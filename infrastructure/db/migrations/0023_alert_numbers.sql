-- Alerts get an integer public id (alert_id in the API, webhooks and mails; docs/alerts.md). Existing
-- alerts are numbered as the column is added.
ALTER TABLE "alerts" ADD COLUMN "number" bigint NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "alerts_number_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_number_unique" UNIQUE("number");