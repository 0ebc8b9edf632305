CREATE TABLE "rollup_pending" (
	"report_id" bigint NOT NULL,
	"account_id" uuid NOT NULL,
	"source_ip" "inet" NOT NULL,
	"disposition" text NOT NULL,
	"dkim_aligned" boolean NOT NULL,
	"spf_aligned" boolean NOT NULL,
	"messages" bigint NOT NULL,
	"spf_pass" bigint NOT NULL,
	"dkim_pass" bigint NOT NULL,
	"forwarded" bigint NOT NULL,
	"dkim_domains" text NOT NULL,
	"spf_domains" text NOT NULL
);
