/**
 * A training agent's course as a tree: modules, their lessons, each lesson's
 * sources with their progress (polled while any moves); add and delete at
 * every level (deleting a parent takes its children, after confirmation).
 */
import type { Lesson, LessonSource, Module } from "../../../../schema/Training.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, Status, useAction, usePolling, useResource } from "../ui.js"
import { AgentHeader } from "./Agents.js"

const moving = (s: LessonSource) => s.status === "pending" || s.status === "processing"

const Sources = ({ client, agentId, lesson }: { client: Client; agentId: string; lesson: Lesson }) => {
  const sources = useResource(() => client.list<LessonSource>(`/v1/agents/${agentId}/sources`, { lesson_id: lesson.id }), [lesson.id])
  usePolling(sources.data?.data.some(moving) ?? false, 1000, () => sources.reload())
  const [title, setTitle] = useState("")
  const [content, setContent] = useState("")
  const action = useAction()
  return (
    <div class="tree-children">
      <Loaded resource={sources} what="sources">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No sources in this lesson.</Empty>
          ) : (
            <ul class="sources">
              {page.data.map((s) => (
                <li key={s.id} class={`source source-${s.status}`}>
                  <div class="source-head">
                    <strong>{s.title}</strong> <Status value={s.status} />
                    {s.is_primary ? <span class="muted">primary</span> : null}
                  </div>
                  <div class="progress-line">
                    <label for={`lp-${s.id}`}>{s.phase.replace(/_/g, " ")}</label>
                    <progress id={`lp-${s.id}`} max={100} value={s.progress} />
                    <span class="pct">{s.progress}%</span>
                  </div>
                  {s.error === null ? null : <p class="source-error">{s.error}</p>}
                  <ConfirmButton
                    label="Delete source"
                    what={s.title}
                    confirm={`Delete ${s.title}?`}
                    onConfirm={async () => {
                      if (await action.run(() => client.call("DELETE", `/v1/agents/${agentId}/sources/${s.id}`))) sources.reload()
                    }}
                  />
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <form
        class="inline-form"
        aria-label={`New text source in ${lesson.title}`}
        onSubmit={async (e) => {
          e.preventDefault()
          const body = { lesson_id: lesson.id, type: "text", title, content }
          if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/sources`, { body }))) {
            setTitle("")
            setContent("")
            sources.reload()
          }
        }}
      >
        <Field label="Source title" value={title} onInput={setTitle} required name="source-title" />
        <Field label="Source text" value={content} onInput={setContent} multiline={2} required name="source-text" />
        <button type="submit">Add text source</button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </div>
  )
}

const Lessons = ({ client, agentId, module }: { client: Client; agentId: string; module: Module }) => {
  const lessons = useResource(() => client.list<Lesson>(`/v1/agents/${agentId}/lessons`, { module_id: module.id }), [module.id])
  const [open, setOpen] = useState<string | undefined>(undefined)
  const [title, setTitle] = useState("")
  const action = useAction()
  return (
    <div class="tree-children">
      <Loaded resource={lessons} what="lessons">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No lessons in this module.</Empty>
          ) : (
            <ol class="tree">
              {page.data.map((lesson) => (
                <li key={lesson.id}>
                  <button
                    type="button"
                    class="tree-toggle"
                    aria-expanded={open === lesson.id}
                    onClick={() => setOpen(open === lesson.id ? undefined : lesson.id)}
                  >
                    <span aria-hidden="true">{open === lesson.id ? "▾ " : "▸ "}</span>Lesson: {lesson.title}
                  </button>
                  <ConfirmButton
                    label="Delete lesson"
                    what={lesson.title}
                    confirm={`Delete ${lesson.title} and its sources?`}
                    onConfirm={async () => {
                      if (await action.run(() => client.call("DELETE", `/v1/agents/${agentId}/lessons/${lesson.id}?cascade=true`))) lessons.reload()
                    }}
                  />
                  {open === lesson.id ? <Sources client={client} agentId={agentId} lesson={lesson} /> : null}
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
      <form
        class="inline-form"
        aria-label={`New lesson in ${module.title}`}
        onSubmit={async (e) => {
          e.preventDefault()
          if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/lessons`, { body: { module_id: module.id, title } }))) {
            setTitle("")
            lessons.reload()
          }
        }}
      >
        <Field label="Lesson title" value={title} onInput={setTitle} required name="lesson-title" />
        <button type="submit">Add lesson</button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </div>
  )
}

export const CoursePage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const modules = useResource(() => client.list<Module>(`/v1/agents/${agentId}/modules`), [agentId])
  const [open, setOpen] = useState<string | undefined>(undefined)
  const [title, setTitle] = useState("")
  const action = useAction()
  return (
    <section>
      <AgentHeader client={client} agentId={agentId} current="course" />
      <p class="muted">Training agents only: modules hold lessons, lessons hold the sources the agent teaches from.</p>
      <Loaded resource={modules} what="modules">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No modules yet.</Empty>
          ) : (
            <ol class="tree card">
              {page.data.map((m) => (
                <li key={m.id}>
                  <button type="button" class="tree-toggle" aria-expanded={open === m.id} onClick={() => setOpen(open === m.id ? undefined : m.id)}>
                    <span aria-hidden="true">{open === m.id ? "▾ " : "▸ "}</span>Module: {m.title}
                  </button>
                  <ConfirmButton
                    label="Delete module"
                    what={m.title}
                    confirm={`Delete ${m.title} with its lessons and sources?`}
                    onConfirm={async () => {
                      if (await action.run(() => client.call("DELETE", `/v1/agents/${agentId}/modules/${m.id}?cascade=true`))) modules.reload()
                    }}
                  />
                  {open === m.id ? <Lessons client={client} agentId={agentId} module={m} /> : null}
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
      <form
        class="card inline-form"
        aria-label="New module"
        onSubmit={async (e) => {
          e.preventDefault()
          if (await action.run(() => client.call("POST", `/v1/agents/${agentId}/modules`, { body: { title } }))) {
            setTitle("")
            modules.reload()
          }
        }}
      >
        <Field label="Module title" value={title} onInput={setTitle} required name="module-title" />
        <button type="submit" class="primary">
          Add module
        </button>
      </form>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </section>
  )
}
