CREATE TABLE "ingest_message_pieces" (
	"account_id" uuid NOT NULL,
	"message_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	CONSTRAINT "ingest_message_pieces_message_id_seq_pk" PRIMARY KEY("message_id","seq")
);
--> statement-breakpoint
ALTER TABLE "ingest_messages" ADD COLUMN "pieces" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "ingest_message_pieces" ADD CONSTRAINT "ingest_message_pieces_message_id_ingest_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."ingest_messages"("id") ON DELETE cascade ON UPDATE no action;