/**
 * Agents: the list, creating one, and an agent's settings (name, instructions, welcome message, origins, widget),
 * with the snippet that puts its chat on a site and the real chat component tried on this page.
 */
import type { Agent, LauncherPosition, LeadCapture } from "../../../../schema/Agents.js"
import { useEffect, useRef, useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, Empty, ErrorBox, Field, Loaded, LoadMore, Select, Snippet, useAction, usePagedList, useResource, when } from "../ui.js"

type Tab = "settings" | "knowledge" | "playground" | "qa" | "glossary" | "course" | "insights" | "evaluations"

const AgentTabs = ({ agentId, current }: { agentId: string; current: Tab }) => (
  <nav class="tabs" aria-label="Agent">
    {(
      [
        ["settings", "Settings", `#/agents/${agentId}`],
        ["knowledge", "Knowledge", `#/agents/${agentId}/knowledge`],
        ["playground", "Playground", `#/agents/${agentId}/playground`],
        ["qa", "Q&A", `#/agents/${agentId}/qa`],
        ["glossary", "Glossary", `#/agents/${agentId}/glossary`],
        ["course", "Course", `#/agents/${agentId}/course`],
        ["insights", "Insights", `#/agents/${agentId}/insights`],
        ["evaluations", "Evaluations", `#/agents/${agentId}/evaluations`]
      ] as const
    ).map(([tab, label, href]) => (
      <a href={href} key={tab} aria-current={tab === current ? "page" : undefined}>
        {label}
      </a>
    ))}
  </nav>
)

/** The agent's name as a heading, with its tabs. */
export const AgentHeader = ({
  client,
  agentId,
  current
}: {
  client: Client
  agentId: string
  current: Tab
}) => {
  const agent = useResource<Agent>(() => client.call("GET", `/v1/agents/${agentId}`), [agentId])
  const title = { settings: "Settings", knowledge: "Knowledge", playground: "Playground", qa: "Q&A", glossary: "Glossary", course: "Course", insights: "Insights", evaluations: "Evaluations" }[current]
  return (
    <>
      <p class="crumbs">
        <a href="#/agents">Agents</a> / {agent.data?.name ?? agentId}
      </p>
      <h1>
        {title}: {agent.data?.name ?? "…"}
      </h1>
      {agent.error === undefined ? null : <ErrorBox error={agent.error} retry={agent.reload} />}
      <AgentTabs agentId={agentId} current={current} />
    </>
  )
}

const CreateAgent = ({ client, onCreated }: { client: Client; onCreated: (agent: Agent) => void }) => {
  const [name, setName] = useState("")
  const [type, setType] = useState("support")
  const action = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    let created: Agent | undefined
    const ok = await action.run(async () => {
      created = await client.call<Agent>("POST", "/v1/agents", { body: { name, type } })
    })
    if (ok && created !== undefined) {
      setName("")
      onCreated(created)
    }
  }
  return (
    <form class="card inline-form" onSubmit={submit} aria-labelledby="create-agent">
      <h2 id="create-agent">New agent</h2>
      <Field label="Name" value={name} onInput={setName} required name="agent-name" />
      <Select
        label="Type"
        value={type}
        onChange={setType}
        options={[
          ["support", "Support"],
          ["training", "Training"]
        ]}
      />
      <button type="submit" class="primary" disabled={action.pending}>
        Create agent
      </button>
      {action.error === undefined ? null : <ErrorBox error={action.error} />}
    </form>
  )
}

export const AgentsPage = ({ client }: { client: Client }) => {
  const agents = usePagedList((limit, after) => client.list<Agent>("/v1/agents", { limit, starting_after: after }), [client])
  return (
    <section>
      <h1>Agents</h1>
      <CreateAgent client={client} onCreated={(agent) => (location.hash = `#/agents/${agent.id}/knowledge`)} />
      <Loaded resource={agents} what="agents">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No agents yet. Create the first one above.</Empty>
          ) : (
            <table>
              <caption>Agents of this environment</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Created</th>
                  <th scope="col">Open</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((agent) => (
                  <tr key={agent.id}>
                    <td>
                      <a href={`#/agents/${agent.id}`}>{agent.name}</a>
                    </td>
                    <td>{agent.type}</td>
                    <td>
                      <code>{agent.slug}</code>
                    </td>
                    <td>{when(agent.created_at)}</td>
                    <td class="links">
                      <a href={`#/agents/${agent.id}/knowledge`} aria-label={`Knowledge of ${agent.name}`}>
                        Knowledge
                      </a>{" "}
                      <a href={`#/agents/${agent.id}/playground`} aria-label={`Playground of ${agent.name}`}>
                        Playground
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <LoadMore list={agents} what="agents" />
    </section>
  )
}

const EditAgent = ({ client, agent, onSaved }: { client: Client; agent: Agent; onSaved: () => void }) => {
  const [name, setName] = useState(agent.name)
  const [instructions, setInstructions] = useState(agent.instructions ?? "")
  const [welcome, setWelcome] = useState(agent.welcome_message ?? "")
  const [origins, setOrigins] = useState(agent.allowed_origins.join("\n"))
  const [displayName, setDisplayName] = useState(agent.widget.display_name ?? "")
  const [color, setColor] = useState(agent.widget.color)
  const [launcher, setLauncher] = useState<string>(agent.widget.launcher_position)
  const [leadCapture, setLeadCapture] = useState<string>(agent.widget.lead_capture)
  const [handoff, setHandoff] = useState(agent.widget.handoff)
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const remove = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    setSaved(false)
    const body = {
      name,
      instructions: instructions.trim() === "" ? null : instructions,
      welcome_message: welcome.trim() === "" ? null : welcome,
      allowed_origins: origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter((o) => o !== ""),
      widget: {
        display_name: displayName.trim() === "" ? null : displayName,
        color,
        launcher_position: launcher as LauncherPosition,
        lead_capture: leadCapture as LeadCapture,
        handoff
      }
    }
    if (await save.run(() => client.call("PATCH", `/v1/agents/${agent.id}`, { body }))) {
      setSaved(true)
      onSaved()
    }
  }
  return (
    <>
      <form class="card" onSubmit={submit}>
        <Field label="Name" value={name} onInput={setName} required name="name" />
        <Field
          label="Instructions"
          value={instructions}
          onInput={setInstructions}
          multiline={6}
          hint="How the agent should answer (tone, scope). Up to 20,000 characters."
          name="instructions"
        />
        <Field label="Welcome message" value={welcome} onInput={setWelcome} multiline={2} name="welcome" />
        <Field
          label="Allowed origins"
          value={origins}
          onInput={setOrigins}
          multiline={3}
          hint="One origin per line (https://shop.example.com): pages allowed to embed this agent's widget."
          name="origins"
        />
        <fieldset class="widget-settings">
          <legend>Widget</legend>
          <Field
            label="Display name"
            value={displayName}
            onInput={setDisplayName}
            hint={`The name the chat widget shows; empty: the agent's name (${agent.name}).`}
            name="widget-display-name"
          />
          <Field label="Colour" type="color" value={color} onInput={setColor} name="widget-color" />
          <Select
            label="Launcher position"
            value={launcher}
            onChange={setLauncher}
            options={[
              ["bottom-right", "Bottom right"],
              ["bottom-left", "Bottom left"]
            ]}
          />
          <Select
            label="Lead capture"
            value={leadCapture}
            onChange={setLeadCapture}
            options={[
              ["off", "Off"],
              ["before_first_message", "Before the first message"],
              ["on_escalation", "When the visitor asks for a person"]
            ]}
          />
          <label class="check">
            <input
              type="checkbox"
              name="widget-handoff"
              checked={handoff}
              onChange={(e) => setHandoff((e.currentTarget as HTMLInputElement).checked)}
            />
            People answer live in the widget (hand-off)
          </label>
        </fieldset>
        <p class="muted">
          Slug <code>{agent.slug}</code> · type {agent.type} · updated {when(agent.updated_at)}
        </p>
        <button type="submit" class="primary" disabled={save.pending}>
          Save changes
        </button>
        <span role="status" class="saved">
          {saved ? "Saved." : ""}
        </span>
        {save.error === undefined ? null : <ErrorBox error={save.error} />}
      </form>
      <WidgetEmbed agent={agent} />
      <div class="card danger-zone">
        <h2>Delete this agent</h2>
        <p>The agent stops answering; its data is kept as the service's retention says.</p>
        <ConfirmButton
          label="Delete agent"
          confirm={`Delete ${agent.name}?`}
          onConfirm={async () => {
            if (await remove.run(() => client.call("DELETE", `/v1/agents/${agent.id}`))) location.hash = "#/agents"
          }}
        />
        {remove.error === undefined ? null : <ErrorBox error={remove.error} />}
      </div>
    </>
  )
}

const chatScript = "/storage/v1/object/public/widget/v1/service-chat-element.esm.js"
const widgetKeyStore = "console.widget-key"

/**
 * The snippet that embeds the agent's chat, and the real `<service-chat>` on this page once a widget key is given
 * and this page's origin is one the agent allows (the component asks the widget surface as any site's page does).
 */
const WidgetEmbed = ({ agent }: { agent: Agent }) => {
  const [key, setKey] = useState(sessionStorage.getItem(widgetKeyStore) ?? "")
  const holder = useRef<HTMLDivElement>(null)
  const widgetKey = key.trim()
  const isWidgetKey = /^widget_pk_(test|live)_/.test(widgetKey)
  const allowedHere = agent.allowed_origins.includes(location.origin)
  const previewable = isWidgetKey && allowedHere
  useEffect(() => {
    const host = holder.current
    if (host === null || !previewable) return
    if (document.querySelector(`script[src="${chatScript}"]`) === null) {
      const script = document.createElement("script")
      script.type = "module"
      script.src = chatScript
      document.head.append(script)
    }
    const chat = document.createElement("service-chat")
    chat.setAttribute("api-key", widgetKey)
    chat.setAttribute("agent-id", agent.id)
    host.replaceChildren(chat)
    return () => chat.remove()
    // a new element after each save: it reads the agent's widget settings again
  }, [previewable, widgetKey, agent.id, agent.updated_at])
  const snippet = `<script type="module" src="${location.origin}${chatScript}"></script>\n<service-chat api-key="${isWidgetKey ? widgetKey : "widget_pk_live_…"}" agent-id="${agent.id}"></service-chat>`
  return (
    <div class="card preview">
      <h2>Put the chat on a site</h2>
      <p class="muted">
        Allowed origins: {agent.allowed_origins.length === 0 ? "none yet (add them above)" : agent.allowed_origins.join(", ")}
      </p>
      <Field
        label="Widget key"
        value={key}
        onInput={(value) => {
          sessionStorage.setItem(widgetKeyStore, value.trim())
          setKey(value)
        }}
        hint="A widget_pk_… key of this environment (API keys): the snippet carries it, and the chat below runs with it."
        name="widget-key"
      />
      {previewable ? (
        <div ref={holder} class="chat-preview">
          <Empty>The chat's launcher is at the corner of this page.</Empty>
        </div>
      ) : (
        <Empty>
          {isWidgetKey
            ? `Add ${location.origin} to the allowed origins to try the chat on this page.`
            : "Enter a widget key to try the chat on this page."}
        </Empty>
      )}
      <Snippet id="chat-snippet" text={snippet} rows={3} />
    </div>
  )
}

export const AgentPage = ({ client, agentId }: { client: Client; agentId: string }) => {
  const agent = useResource<Agent>(() => client.call("GET", `/v1/agents/${agentId}`), [agentId])
  return (
    <section>
      <p class="crumbs">
        <a href="#/agents">Agents</a> / {agent.data?.name ?? agentId}
      </p>
      <h1>Settings: {agent.data?.name ?? "…"}</h1>
      <AgentTabs agentId={agentId} current="settings" />
      <Loaded resource={agent} what="the agent">
        {(data) => <EditAgent client={client} agent={data} onSaved={agent.reload} key={data.id} />}
      </Loaded>
    </section>
  )
}
