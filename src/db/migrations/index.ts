/** Every migration, in order. Ids are the numeric prefixes; never renumber. */
import foundation from "./0001_foundation.js"
import emails from "./0002_emails.js"
import webhooks from "./0003_webhooks.js"
import tickets from "./0004_tickets.js"
import jobs from "./0005_jobs.js"
import knowledge from "./0006_knowledge.js"
import qa from "./0007_qa.js"
import jobClaims from "./0008_job_claims.js"
import webhookJobs from "./0009_webhook_jobs.js"
import conversations from "./0010_conversations.js"
import leadsUsage from "./0011_leads_usage.js"
import forms from "./0012_forms.js"
import training from "./0013_training.js"
import jobClaimFunction from "./0014_job_claim_function.js"
import messageEventsRetention from "./0015_message_events_retention.js"
import carriedWrites from "./0016_carried_writes.js"
import webhookClaimFunction from "./0017_webhook_claim_function.js"
import leaseById from "./0018_lease_by_id.js"
import claimPlans from "./0019_claim_plans.js"
import flatWebhookClaim from "./0020_flat_webhook_claim.js"
import apiKeyPages from "./0021_api_key_pages.js"
import sealedAnswers from "./0022_sealed_answers.js"
import attemptAtClaim from "./0023_attempt_at_claim.js"
import qaTextSearch from "./0024_qa_text_search.js"
import embeddingSpace from "./0025_embedding_space.js"
import statisticsTargets from "./0026_statistics_targets.js"
import ginPendingLists from "./0027_gin_pending_lists.js"
import crawls from "./0028_crawls.js"
import crawlPagesByOutcome from "./0029_crawl_pages_by_outcome.js"
import ingestClaim from "./0030_ingest_claim.js"
import sourceRefresh from "./0031_source_refresh.js"
import refreshRounds from "./0032_refresh_rounds.js"
import crawlSchedules from "./0033_crawl_schedules.js"
import workspaceShares from "./0034_workspace_shares.js"
import chunkDrafts from "./0035_chunk_drafts.js"
import widgetSettings from "./0037_widget_settings.js"
import handoff from "./0038_handoff.js"
import sourceTextPieces from "./0039_source_text_pieces.js"
import replyOutcomes from "./0042_reply_outcomes.js"
import conversationEventsRetention from "./0043_conversation_events_retention.js"
import evaluations from "./0045_evaluations.js"
import wordStatistics from "./0046_word_statistics.js"
import evaluationTriggers from "./0047_evaluation_triggers.js"
import languages from "./0048_languages.js"

export const migrations = {
  "0001_foundation": foundation,
  "0002_emails": emails,
  "0003_webhooks": webhooks,
  "0004_tickets": tickets,
  "0005_jobs": jobs,
  "0006_knowledge": knowledge,
  "0007_qa": qa,
  "0008_job_claims": jobClaims,
  "0009_webhook_jobs": webhookJobs,
  "0010_conversations": conversations,
  "0011_leads_usage": leadsUsage,
  "0012_forms": forms,
  "0013_training": training,
  "0014_job_claim_function": jobClaimFunction,
  "0015_message_events_retention": messageEventsRetention,
  "0016_carried_writes": carriedWrites,
  "0017_webhook_claim_function": webhookClaimFunction,
  "0018_lease_by_id": leaseById,
  "0019_claim_plans": claimPlans,
  "0020_flat_webhook_claim": flatWebhookClaim,
  "0021_api_key_pages": apiKeyPages,
  "0022_sealed_answers": sealedAnswers,
  "0023_attempt_at_claim": attemptAtClaim,
  "0024_qa_text_search": qaTextSearch,
  "0025_embedding_space": embeddingSpace,
  "0026_statistics_targets": statisticsTargets,
  "0027_gin_pending_lists": ginPendingLists,
  "0028_crawls": crawls,
  "0029_crawl_pages_by_outcome": crawlPagesByOutcome,
  "0030_ingest_claim": ingestClaim,
  "0031_source_refresh": sourceRefresh,
  "0032_refresh_rounds": refreshRounds,
  "0033_crawl_schedules": crawlSchedules,
  "0034_workspace_shares": workspaceShares,
  "0035_chunk_drafts": chunkDrafts,
  "0037_widget_settings": widgetSettings,
  "0038_handoff": handoff,
  "0039_source_text_pieces": sourceTextPieces,
  "0042_reply_outcomes": replyOutcomes,
  "0043_conversation_events_retention": conversationEventsRetention,
  "0045_evaluations": evaluations,
  "0046_word_statistics": wordStatistics,
  "0047_evaluation_triggers": evaluationTriggers,
  "0048_languages": languages
}
