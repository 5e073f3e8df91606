/**
 * "Crawl a website" on an agent's knowledge page: start a crawl from a site's address, watch its counts move
 * (polled while it runs or its pages are being indexed), see what it skipped and why, cancel it.
 */
import { crawlSettled, crawlShare } from "../../../../schema/CrawlProgress.js"
import type { Crawl, CrawlPage } from "../../../../schema/Crawls.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { Empty, ErrorBox, Field, Loaded, Select, Status, useAction, usePolling, useResource, when } from "../ui.js"

const moving = (c: Crawl) => !crawlSettled(c)
const share = (c: Crawl) => Math.round(100 * crawlShare(c))

const Skipped = ({ client, crawl }: { client: Client; crawl: Crawl }) => {
  const pages = useResource(
    () => client.list<CrawlPage>(`/v1/agents/${crawl.agent_id}/crawls/${crawl.id}/pages`, { limit: "100", outcome: "skipped" }),
    [crawl.id]
  )
  return (
    <Loaded resource={pages} what="skipped pages">
      {(page) =>
        page.data.length === 0 ? (
          <Empty>Nothing skipped.</Empty>
        ) : (
          <ul class="skipped" aria-label="Skipped pages">
            {page.data.map((p) => (
              <li key={p.url}>
                <code>{p.url}</code> <span class="muted">{(p.reason ?? "").replace(/_/g, " ")}</span>
              </li>
            ))}
          </ul>
        )
      }
    </Loaded>
  )
}

const CrawlRow = ({ client, crawl, onChanged }: { client: Client; crawl: Crawl; onChanged: () => void }) => {
  const [showSkipped, setShowSkipped] = useState(false)
  const cancel = useAction()
  const unschedule = useAction()
  const { pages } = crawl
  const skipped = Object.entries(pages.skipped).filter(([, n]) => n > 0)
  return (
    <li class={`crawl crawl-${crawl.status}`} data-crawl-id={crawl.id}>
      <div class="source-head">
        <strong>{crawl.url}</strong>
        <Status value={crawl.status} />
        <span class="muted">
          started {when(crawl.created_at)}
          {crawl.scheduled_by === null ? "" : " by its schedule"}
          {crawl.next_run_at === null ? "" : ` · again ${crawl.schedule}, next ${when(crawl.next_run_at)}`}
        </span>
      </div>
      <div class="progress-line">
        <label for={`crawl-${crawl.id}`}>{moving(crawl) ? "crawling" : "done"}</label>
        <progress id={`crawl-${crawl.id}`} max={100} value={share(crawl)} aria-valuetext={`${share(crawl)}%`} />
        <span class="pct">{share(crawl)}%</span>
      </div>
      <p class="crawl-counts">
        {pages.kept} kept · {pages.indexed} indexed · {pages.indexing} indexing · {pages.failed} failed · {pages.queued} queued
        {skipped.length === 0 ? "" : ` · skipped ${skipped.map(([reason, n]) => `${reason.replace(/_/g, " ")} ${n}`).join(", ")}`}
      </p>
      {crawl.error === null ? null : (
        <p class="source-error">
          Failed: {crawl.error.message} ({crawl.error.code})
        </p>
      )}
      {skipped.length === 0 ? null : (
        <button type="button" aria-expanded={showSkipped} onClick={() => setShowSkipped(!showSkipped)}>
          {showSkipped ? "Hide skipped pages" : "Show skipped pages"}
        </button>
      )}
      {crawl.status === "queued" || crawl.status === "running" ? (
        <button
          type="button"
          disabled={cancel.pending}
          onClick={async () => {
            if (await cancel.run(() => client.call("POST", `/v1/agents/${crawl.agent_id}/crawls/${crawl.id}/cancel`))) onChanged()
          }}
        >
          Cancel crawl
        </button>
      ) : null}
      {crawl.next_run_at === null ? null : (
        <button
          type="button"
          disabled={unschedule.pending}
          onClick={async () => {
            const body = { schedule: "off" }
            if (await unschedule.run(() => client.call("PATCH", `/v1/agents/${crawl.agent_id}/crawls/${crawl.id}`, { body }))) onChanged()
          }}
        >
          Stop crawling again
        </button>
      )}
      {cancel.error === undefined ? null : <ErrorBox error={cancel.error} />}
      {unschedule.error === undefined ? null : <ErrorBox error={unschedule.error} />}
      {showSkipped ? <Skipped client={client} crawl={crawl} /> : null}
    </li>
  )
}

/** `onProgress`: the crawl made sources, or indexed them: the page's list of sources is reloaded. */
export const Crawls = ({ client, agentId, onProgress }: { client: Client; agentId: string; onProgress: () => void }) => {
  const [url, setUrl] = useState("")
  const [limit, setLimit] = useState("")
  const [schedule, setSchedule] = useState("off")
  const action = useAction()
  const crawls = useResource(() => client.list<Crawl>(`/v1/agents/${agentId}/crawls`, { limit: "5" }), [agentId])
  const active = crawls.data?.data.some(moving) ?? false
  usePolling(active, 1000, () => {
    crawls.reload()
    onProgress()
  })

  const submit = async (e: Event) => {
    e.preventDefault()
    const ok = await action.run(() =>
      client.call("POST", `/v1/agents/${agentId}/crawls`, { body: { url, schedule, ...(limit === "" ? {} : { limit: Number(limit) }) } })
    )
    if (ok) {
      setUrl("")
      setLimit("")
      setSchedule("off")
      crawls.reload()
    }
  }

  return (
    <section class="card" aria-labelledby="crawl-site">
      <h2 id="crawl-site">Crawl a website</h2>
      <p class="muted small">
        Every page of the site becomes a source: robots.txt and sitemaps are read, each page once, one request at a time.
      </p>
      <form onSubmit={submit}>
        <Field label="Site address" type="url" value={url} onInput={setUrl} required name="crawl-url" />
        <Field label="Pages at most (optional)" value={limit} onInput={setLimit} name="crawl-limit" hint="Default 500, capped by the plan." />
        <Select
          label="Crawl the site again"
          value={schedule}
          options={[
            ["off", "Never"],
            ["daily", "Daily"],
            ["weekly", "Weekly"]
          ]}
          onChange={setSchedule}
        />
        <button type="submit" disabled={action.pending}>
          {action.pending ? "Starting…" : "Start crawl"}
        </button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
      <Loaded resource={crawls} what="crawls">
        {(page) =>
          page.data.length === 0 ? null : (
            <ul class="crawls" aria-label="Crawls">
              {page.data.map((crawl) => (
                <CrawlRow key={crawl.id} client={client} crawl={crawl} onChanged={crawls.reload} />
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  )
}
