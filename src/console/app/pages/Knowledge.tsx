/**
 * An agent's knowledge: adding text, a URL, a batch of URLs, a file or CSV
 * Q&A, crawling a website, each source's progress, polled while any is still
 * moving (a refresh queued included), a url source's freshness with a refresh
 * on demand, the agent's refresh schedule, and a retrieval test.
 */
import type { Agent } from "../../../../schema/Agents.js"
import type { KnowledgeSource } from "../../../../schema/Knowledge.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, LoadMore, Select, Status, useAction, usePagedList, usePolling, useResource, when } from "../ui.js"
import { AgentHeader } from "./Agents.js"
import { Crawls } from "./Crawls.js"
import { TestRetrieval } from "./TestRetrieval.js"

type Kind = "text" | "url" | "batch" | "file" | "csv"
const kinds: ReadonlyArray<readonly [Kind, string]> = [
  ["text", "Text"],
  ["url", "URL"],
  ["batch", "Batch of URLs"],
  ["file", "File"],
  ["csv", "CSV Q&A"]
]

const fileTypes: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  htm: "text/html",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  m4a: "audio/mp4",
  ogg: "audio/ogg"
}

const contentTypeOf = (file: File): string =>
  file.type !== "" && Object.values(fileTypes).includes(file.type)
    ? file.type
    : fileTypes[file.name.split(".").pop()?.toLowerCase() ?? ""] ?? file.type

/** Declares the file, uploads its bytes, confirms it; returns its id. */
const uploadFile = async (client: Client, file: File): Promise<string> => {
  const declared = await client.call<{ id: string }>("POST", "/v1/files", {
    body: { filename: file.name, content_type: contentTypeOf(file), size_bytes: file.size }
  })
  await client.fetch("PUT", `/v1/files/${declared.id}/content`, {
    raw: file,
    headers: { "content-type": contentTypeOf(file) }
  })
  await client.call("POST", `/v1/files/${declared.id}/confirm`)
  return declared.id
}

const AddSource = ({ client, agentId, onAdded }: { client: Client; agentId: string; onAdded: () => void }) => {
  const [kind, setKind] = useState<Kind>("text")
  const [title, setTitle] = useState("")
  const [content, setContent] = useState("")
  const [url, setUrl] = useState("")
  const [urls, setUrls] = useState("")
  const [file, setFile] = useState<File | undefined>(undefined)
  const [note, setNote] = useState("")
  const action = useAction()
  const base = `/v1/agents/${agentId}/knowledge`

  const submit = async (e: Event) => {
    e.preventDefault()
    setNote("")
    const ok = await action.run(async () => {
      switch (kind) {
        case "text":
          await client.call("POST", base, { body: { type: "text", title, content } })
          return setNote(`Text "${title}" added.`)
        case "url":
          await client.call("POST", base, { body: { type: "url", url, ...(title === "" ? {} : { title }) } })
          return setNote(`URL added.`)
        case "batch": {
          const list = urls.split(/\s+/).filter((u) => u !== "")
          const batch = await client.call<{ count: number }>("POST", `${base}/batch`, {
            body: { urls: list },
            headers: { "idempotency-key": crypto.randomUUID() }
          })
          return setNote(`${batch.count} URLs added.`)
        }
        case "file": {
          if (file === undefined) throw new Error("Choose a file first")
          const fileId = await uploadFile(client, file)
          await client.call("POST", base, { body: { type: "file_id", file_id: fileId, ...(title === "" ? {} : { title }) } })
          return setNote(`File ${file.name} added.`)
        }
        case "csv": {
          const text = file === undefined ? content : await file.text()
          await client.call("POST", base, {
            body: { type: "csv_qa", content: text, ...(title === "" ? {} : { title }) }
          })
          return setNote(`CSV Q&A added.`)
        }
      }
    })
    if (ok) {
      setTitle("")
      setContent("")
      setUrl("")
      setUrls("")
      setFile(undefined)
      onAdded()
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="add-source">
      <h2 id="add-source">Add knowledge</h2>
      <fieldset class="kinds">
        <legend>Kind of source</legend>
        {kinds.map(([value, label]) => (
          <label key={value} class="radio">
            <input
              type="radio"
              name="kind"
              value={value}
              checked={kind === value}
              onChange={() => {
                setKind(value)
                setFile(undefined)
                action.clear()
              }}
            />
            {label}
          </label>
        ))}
      </fieldset>
      {kind === "batch" ? null : (
        <Field
          label={kind === "text" ? "Title" : "Title (optional)"}
          value={title}
          onInput={setTitle}
          required={kind === "text"}
          name="title"
        />
      )}
      {kind === "text" ? <Field label="Content" value={content} onInput={setContent} multiline={6} required name="content" /> : null}
      {kind === "url" ? <Field label="Page URL" type="url" value={url} onInput={setUrl} required name="url" /> : null}
      {kind === "batch" ? (
        <Field
          label="URLs"
          value={urls}
          onInput={setUrls}
          multiline={6}
          required
          hint="One per line, up to 500, processed in order."
          name="urls"
        />
      ) : null}
      {kind === "file" || kind === "csv" ? (
        <div class="field">
          <label for="source-file">{kind === "file" ? "File" : "CSV file (or paste below)"}</label>
          <input
            id="source-file"
            type="file"
            accept={kind === "file" ? Object.keys(fileTypes).map((ext) => `.${ext}`).join(",") : ".csv,text/csv"}
            required={kind === "file"}
            onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0])}
            aria-describedby="source-file-hint"
          />
          <small id="source-file-hint" class="hint">
            {kind === "file"
              ? "Images (read by OCR), PDF, text, Markdown, HTML or audio; up to 25 MB."
              : "Columns question,answer[,category]; up to 1 MB."}
          </small>
        </div>
      ) : null}
      {kind === "csv" && file === undefined ? (
        <Field label="CSV text" value={content} onInput={setContent} multiline={5} name="csv" placeholder="question,answer" />
      ) : null}
      <button type="submit" class="primary" disabled={action.pending}>
        {action.pending ? "Adding…" : "Add source"}
      </button>
      <span role="status" class="saved">
        {note}
      </span>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </form>
  )
}

const moving = (s: KnowledgeSource) => s.status === "pending" || s.status === "processing" || s.refresh?.status === "queued"

/** A url source's freshness: what its refreshes found, and a refresh on demand. */
const Freshness = ({ client, source, onChanged }: { client: Client; source: KnowledgeSource; onChanged: () => void }) => {
  const refresh = useAction()
  if (source.refresh === null) return null
  const { changed_at, checked_at, gone_since, status } = source.refresh
  return (
    <div class="freshness">
      <p class="muted small">
        {status === "queued" ? "Refresh queued" : `Checked ${when(checked_at)}`}
        {changed_at === null ? "" : ` · changed ${when(changed_at)}`}
      </p>
      {gone_since === null ? null : (
        <p class="source-warning">The page answers “not found” since {when(gone_since)}; its knowledge goes after the agent's grace.</p>
      )}
      <button
        type="button"
        disabled={refresh.pending || status === "queued" || source.status !== "indexed"}
        aria-label={`Refresh ${source.title || source.source_ref}`}
        onClick={async () => {
          if (await refresh.run(() => client.call("POST", `/v1/agents/${source.agent_id}/knowledge/${source.id}/refresh`))) onChanged()
        }}
      >
        Refresh
      </button>
      {refresh.error === undefined ? null : <ErrorBox error={refresh.error} />}
    </div>
  )
}

/** The agent's refresh schedule and the grace a gone page keeps its knowledge. */
const RefreshSchedule = ({ client, agentId }: { client: Client; agentId: string }) => {
  const agent = useResource(() => client.call<Agent>("GET", `/v1/agents/${agentId}`), [agentId])
  return (
    <Loaded resource={agent} what="refresh schedule">
      {(data) => <ScheduleForm key={data.updated_at} client={client} agentId={agentId} initial={data.knowledge_refresh} />}
    </Loaded>
  )
}

const ScheduleForm = ({ client, agentId, initial }: { client: Client; agentId: string; initial: Agent["knowledge_refresh"] }) => {
  const [schedule, setSchedule] = useState<string>(initial.schedule)
  const [grace, setGrace] = useState(String(initial.gone_grace_days))
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const round = useAction()
  const [started, setStarted] = useState<string | undefined>(undefined)
  return (
    <form
      class="refresh-schedule"
      aria-label="Keep web pages fresh"
      onSubmit={async (e) => {
        e.preventDefault()
        setSaved(false)
        const body = { knowledge_refresh: { schedule, gone_grace_days: Number(grace) } }
        if (await save.run(() => client.call("PATCH", `/v1/agents/${agentId}`, { body }))) setSaved(true)
      }}
    >
      <h3>Keep web pages fresh</h3>
      <Select
        label="Refresh every web page"
        value={schedule}
        options={[
          ["off", "Never (on demand only)"],
          ["daily", "Daily"],
          ["weekly", "Weekly"]
        ]}
        onChange={setSchedule}
      />
      <Field label="Days a page gone keeps its knowledge" type="number" value={grace} onInput={setGrace} />
      <button type="submit" disabled={save.pending}>
        Save schedule
      </button>
      {saved ? <span role="status"> Saved.</span> : null}
      {save.error === undefined ? null : <ErrorBox error={save.error} />}
      <p>
        <button
          type="button"
          disabled={round.pending}
          onClick={async () => {
            setStarted(undefined)
            await round.run(async () => {
              const begun = await client.call<{ started_at: string }>("POST", `/v1/agents/${agentId}/knowledge/refresh`)
              setStarted(begun.started_at)
            })
          }}
        >
          Refresh every web page now
        </button>
        {started === undefined ? null : <span role="status"> Round started {when(started)}.</span>}
      </p>
      {round.error === undefined ? null : <ErrorBox error={round.error} />}
    </form>
  )
}

const SourceRow = ({ client, source, onDeleted }: { client: Client; source: KnowledgeSource; onDeleted: () => void }) => {
  const remove = useAction()
  return (
    <li class={`source source-${source.status}`} data-source-id={source.id}>
      <div class="source-head">
        <strong>{source.title || source.source_ref}</strong>
        <Status value={source.status} />
        <span class="muted">
          {source.type} · {source.source_ref}
        </span>
      </div>
      <div class="progress-line">
        <label for={`progress-${source.id}`}>{source.phase.replace(/_/g, " ")}</label>
        <progress id={`progress-${source.id}`} max={100} value={source.progress} aria-valuetext={`${source.progress}%, ${source.phase}`} />
        <span class="pct">{source.progress}%</span>
      </div>
      <p class="muted small">
        Attempts {source.attempts}
        {source.next_attempt_at === null ? "" : ` · next attempt ${when(source.next_attempt_at)}`}
        {source.status === "indexed" ? ` · ${source.chunk_count} passages, ${source.qa_count} Q&A` : ""}
        {source.language === null ? "" : ` · language ${source.language}`}
        {` · added ${when(source.created_at)}`}
      </p>
      {source.error === null ? null : (
        <p class={source.status === "failed" ? "source-error" : "source-warning"}>
          {source.status === "failed" ? "Failed: " : "Last attempt: "}
          {source.error}
          {source.error_code === null ? "" : ` (${source.error_code})`}
        </p>
      )}
      <Freshness client={client} source={source} onChanged={onDeleted} />
      <ConfirmButton
        label="Delete source"
        what={source.title || source.source_ref}
        confirm={`Delete ${source.title || source.id}?`}
        onConfirm={async () => {
          if (await remove.run(() => client.call("DELETE", `/v1/agents/${source.agent_id}/knowledge/${source.id}`))) onDeleted()
        }}
      />
      {remove.error === undefined ? null : <ErrorBox error={remove.error} />}
    </li>
  )
}

export const KnowledgePage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const sources = usePagedList(
    (limit, after) => client.list<KnowledgeSource>(`/v1/agents/${agentId}/knowledge`, { limit, starting_after: after }),
    [agentId]
  )
  const active = sources.data?.data.some(moving) ?? false
  usePolling(active, 1000, () => sources.reload())
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="knowledge" />
      <AddSource client={client} agentId={agentId} onAdded={sources.reload} />
      <Crawls client={client} agentId={agentId} onProgress={sources.reload} />
      <RefreshSchedule client={client} agentId={agentId} />
      <h2>Sources</h2>
      <Loaded resource={sources} what="sources">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No knowledge yet: add text, a page or a file above.</Empty>
          ) : (
            <ul class="sources">
              {page.data.map((source) => (
                <SourceRow key={source.id} client={client} source={source} onDeleted={sources.reload} />
              ))}
            </ul>
          )
        }
      </Loaded>
      <LoadMore list={sources} what="sources" />
      <TestRetrieval client={client} agentId={agentId} />
    </section>
  )
}
