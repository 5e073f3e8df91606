/**
 * Migrations are history: a database migrated before a migration's text changed never sees the change, so a
 * committed migration's file is frozen. Each one's text is recorded here by its SHA-256 (its first 16 hex
 * digits); a fix goes in a new migration, recorded when it is committed. Each is literal SQL of its own: it
 * imports no other migration, whose edit would change it silently.
 */
import { expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { migrations } from "../../src/db/migrations/index.js"

const folder = new URL("../../src/db/migrations/", import.meta.url)

const committed: Record<string, string> = {
  "0001_foundation": "0cf5dc45035529f2",
  "0002_emails": "2a696ec165eadfd1",
  "0003_webhooks": "a6849506188fadad",
  "0004_tickets": "6d7db8c003c989d8",
  "0005_jobs": "406ed5768e5c27e6",
  "0006_knowledge": "1fdf810a0fc74ab1",
  "0007_qa": "eb77844bd03cc68b",
  "0008_job_claims": "98ce1ea26f20fc53",
  "0009_webhook_jobs": "0ee4f0f3a5dba172",
  "0010_conversations": "d8f848ea6d93d787",
  "0011_leads_usage": "9d6b4970fd36f622",
  "0012_forms": "798f7d49e9e84aa7",
  "0013_training": "907347517fa7c9a6",
  "0014_job_claim_function": "fbbf27b034927744",
  "0015_message_events_retention": "26fb53051e3577f3",
  "0016_carried_writes": "f7fb26ece5aae37d",
  "0017_webhook_claim_function": "f189b0394649970a",
  "0018_lease_by_id": "5ac523a853e1723a",
  "0019_claim_plans": "01ee9e7d59c75751",
  "0020_flat_webhook_claim": "e60617af31a5b9b6",
  "0021_api_key_pages": "d44a6560fea3c187",
  "0022_sealed_answers": "38659a152f205bfb",
  "0023_attempt_at_claim": "dbd4b657e7147dc2",
  "0024_qa_text_search": "53acab52b1723243",
  "0025_embedding_space": "d4bfa54a9c3c8e7a",
  "0026_statistics_targets": "3d433b8c2849af91",
  "0027_gin_pending_lists": "2374240337f58546",
  "0028_crawls": "886b5570dd95ecff",
  "0029_crawl_pages_by_outcome": "c89647e1a8b670db",
  "0030_ingest_claim": "45ccce0e38edd8de",
  "0031_source_refresh": "0995c0e888a1956d",
  "0032_refresh_rounds": "3ef510064de167a5",
  "0033_crawl_schedules": "5f598f595149bbd9",
  "0034_workspace_shares": "4a6c8e115916e8fa",
  "0035_chunk_drafts": "d7c93365dc6cc8e4",
  "0037_widget_settings": "13edfe7c09b35072",
  "0038_handoff": "5123cd192e0ebbdd",
  "0039_source_text_pieces": "af9af1e5c19c634f",
  "0042_reply_outcomes": "74ddb3c5f1bf7a36",
  "0043_conversation_events_retention": "82552cc046440ec7",
  "0045_evaluations": "ed01d38d2b5c05b0",
  "0046_word_statistics": "b8449d12190c32be",
  "0047_evaluation_triggers": "5c8b7c52bcd9ab73",
  "0048_languages": "111a8e5edc7cf2ca"
}

const files = readdirSync(folder).filter((name) => /^\d{4}_.*\.ts$/.test(name))
const textOf = (name: string) => readFileSync(new URL(name, folder), "utf8")

it("every committed migration's text is as it was committed", () => {
  const changed = files
    .map((name) => name.replace(/\.ts$/, ""))
    .filter((name) => name in committed)
    .filter((name) => createHash("sha256").update(textOf(`${name}.ts`)).digest("hex").slice(0, 16) !== committed[name])
  expect(changed, "a committed migration was edited: put the change in a new migration").toEqual([])
})

it("every migration is recorded here and listed in the index, and none imports another", () => {
  const names = files.map((name) => name.replace(/\.ts$/, ""))
  expect(names.filter((name) => !(name in committed)), "record a new migration's hash when it is committed").toEqual([])
  expect(Object.keys(migrations).sort()).toEqual(names.sort())
  expect(files.filter((name) => /from "\.\/\d{4}_/.test(textOf(name)))).toEqual([])
})
