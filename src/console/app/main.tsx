/**
 * The console's shell: signing in with a secret key per environment (kept in
 * this tab's sessionStorage, never a cookie), the sandbox/live switch, the
 * navigation and the hash routes of the pages. Each page module is a chunk of
 * its own, imported when a route first shows it.
 */
import { type ComponentChildren, render } from "preact"
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { type Client, type Environment, environmentOfKey, makeClient } from "./api.js"
import { ErrorBox, Field, Loading, messageOf } from "./ui.js"

const storageKey = (env: Environment) => `console.key.${env}`
const envKey = "console.env"
const environments: ReadonlyArray<readonly [Environment, string]> = [
  ["test", "Sandbox"],
  ["live", "Live"]
]

const readKeys = (): Record<Environment, string | undefined> => ({
  test: sessionStorage.getItem(storageKey("test")) ?? undefined,
  live: sessionStorage.getItem(storageKey("live")) ?? undefined
})

const useHash = () => {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const changed = () => setHash(location.hash)
    addEventListener("hashchange", changed)
    return () => removeEventListener("hashchange", changed)
  }, [])
  return hash.replace(/^#\/?/, "")
}

const SignIn = ({ environment, onKey }: { environment: Environment; onKey: (key: string) => void }) => {
  const [key, setKey] = useState("")
  const [error, setError] = useState<unknown>(undefined)
  const [pending, setPending] = useState(false)
  const name = environment === "test" ? "sandbox" : "live"
  const submit = async (e: Event) => {
    e.preventDefault()
    const trimmed = key.trim()
    const kind = environmentOfKey(trimmed)
    if (kind !== environment) {
      setError(new Error(`A ${name} secret key starts with sk_${environment}_`))
      return
    }
    setPending(true)
    setError(undefined)
    try {
      await makeClient(trimmed, environment).list("/v1/agents", { limit: "1" })
      onKey(trimmed)
    } catch (failure) {
      setError(failure)
    } finally {
      setPending(false)
    }
  }
  return (
    <section class="signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in to the {name} environment</h1>
      <p>
        Paste a {name} secret key (<code>sk_{environment}_…</code>). It stays in this tab only and is sent to the API
        as a bearer token.
      </p>
      <form onSubmit={submit}>
        <Field label="Secret key" type="password" value={key} onInput={setKey} required name="secret-key" />
        {error === undefined ? null : <ErrorBox error={error} />}
        <button type="submit" class="primary" disabled={pending}>
          {pending ? "Checking…" : "Sign in"}
        </button>
      </form>
    </section>
  )
}

const nav: ReadonlyArray<readonly [string, string]> = [
  ["overview", "Overview"],
  ["agents", "Agents"],
  ["tickets", "Tickets"],
  ["conversations", "Conversations"],
  ["leads", "Leads"],
  ["forms", "Forms"],
  ["webhooks", "Webhooks"],
  ["keys", "API keys"]
]

/** The page module `load` imports, drawn by `draw` once it is there; a failed import can be retried. */
const Lazy = <M,>({ load, draw }: { load: () => Promise<M>; draw: (module: M) => ComponentChildren }) => {
  const [state, setState] = useState<{ module?: M; error?: unknown }>({})
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    let live = true
    load().then(
      (module) => live && setState({ module }),
      (error: unknown) => live && setState({ error })
    )
    return () => {
      live = false
    }
  }, [attempt])
  if (state.module !== undefined) return <>{draw(state.module)}</>
  if (state.error !== undefined) return <ErrorBox error={state.error} retry={() => (setState({}), setAttempt(attempt + 1))} />
  return <Loading what="page" />
}

const pages = {
  agents: () => import("./pages/Agents.js"),
  knowledge: () => import("./pages/Knowledge.js"),
  playground: () => import("./pages/Playground.js"),
  qa: () => import("./pages/Qa.js"),
  glossary: () => import("./pages/Glossary.js"),
  course: () => import("./pages/Course.js"),
  insights: () => import("./pages/Insights.js"),
  evaluations: () => import("./pages/Evaluations.js"),
  tickets: () => import("./pages/Tickets.js"),
  webhooks: () => import("./pages/Webhooks.js"),
  conversations: () => import("./pages/Conversations.js"),
  forms: () => import("./pages/Forms.js"),
  keys: () => import("./pages/Keys.js"),
  overview: () => import("./pages/Overview.js")
}

const Route = ({ route, client }: { route: Array<string>; client: Client }) => {
  const [area, id, sub, subId, subSub, runId] = route
  switch (area) {
    case "agents":
      if (id === undefined) return <Lazy load={pages.agents} draw={(m) => <m.AgentsPage client={client} />} />
      if (sub === "knowledge") return <Lazy load={pages.knowledge} draw={(m) => <m.KnowledgePage client={client} agentId={id} />} />
      if (sub === "playground") return <Lazy load={pages.playground} draw={(m) => <m.PlaygroundPage client={client} agentId={id} />} />
      if (sub === "qa") return <Lazy load={pages.qa} draw={(m) => <m.QaPage client={client} agentId={id} />} />
      if (sub === "glossary") return <Lazy load={pages.glossary} draw={(m) => <m.GlossaryPage client={client} agentId={id} />} />
      if (sub === "course") return <Lazy load={pages.course} draw={(m) => <m.CoursePage client={client} agentId={id} />} />
      if (sub === "insights") return <Lazy load={pages.insights} draw={(m) => <m.InsightsPage client={client} agentId={id} />} />
      if (sub === "evaluations") {
        return (
          <Lazy
            load={pages.evaluations}
            draw={(m) =>
              subId === undefined ? (
                <m.EvaluationsPage client={client} agentId={id} />
              ) : subSub === "runs" && runId !== undefined ? (
                <m.RunPage client={client} agentId={id} evaluationId={subId} runId={runId} />
              ) : (
                <m.EvaluationPage client={client} agentId={id} evaluationId={subId} />
              )
            }
          />
        )
      }
      return <Lazy load={pages.agents} draw={(m) => <m.AgentPage client={client} agentId={id} />} />
    case "tickets":
      return (
        <Lazy load={pages.tickets} draw={(m) => (id === undefined ? <m.TicketsPage client={client} /> : <m.TicketPage client={client} publicId={id} />)} />
      )
    case "webhooks":
      return (
        <Lazy load={pages.webhooks} draw={(m) => (id === undefined ? <m.WebhooksPage client={client} /> : <m.WebhookPage client={client} webhookId={id} />)} />
      )
    case "conversations":
      return (
        <Lazy
          load={pages.conversations}
          draw={(m) => (id === undefined ? <m.ConversationsPage client={client} /> : <m.ConversationPage client={client} conversationId={id} />)}
        />
      )
    case "leads":
      return <Lazy load={pages.conversations} draw={(m) => <m.LeadsPage client={client} />} />
    case "forms":
      return <Lazy load={pages.forms} draw={(m) => (id === undefined ? <m.FormsPage client={client} /> : <m.FormPage client={client} formId={id} />)} />
    case "keys":
      return <Lazy load={pages.keys} draw={(m) => <m.KeysPage client={client} />} />
    case "overview":
    case undefined:
    case "":
      return <Lazy load={pages.overview} draw={(m) => <m.OverviewPage client={client} />} />
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No page here. <a href="#/overview">Go to the overview</a>.
          </p>
        </section>
      )
  }
}

const App = () => {
  const [keys, setKeys] = useState(readKeys)
  const [environment, setEnvironment] = useState<Environment>(
    sessionStorage.getItem(envKey) === "live" ? "live" : "test"
  )
  const hash = useHash()
  const route = hash.split("?")[0]!.split("/").filter((part) => part !== "").map(decodeURIComponent)
  const key = keys[environment]
  const client = useMemo(() => (key === undefined ? undefined : makeClient(key, environment)), [key, environment])
  const main = useRef<HTMLElement>(null)

  // a new page (or signing in) moves focus to its content, so keyboard and screen reader users start there
  useEffect(() => {
    main.current?.focus({ preventScroll: true })
    document.title = `${nav.find(([path]) => path === (route[0] ?? "overview"))?.[1] ?? "Console"} · Console`
  }, [hash, client])

  const switchTo = (env: Environment) => {
    sessionStorage.setItem(envKey, env)
    setEnvironment(env)
  }
  const signIn = (value: string) => {
    sessionStorage.setItem(storageKey(environment), value)
    setKeys(readKeys())
  }
  const signOut = () => {
    sessionStorage.removeItem(storageKey(environment))
    setKeys(readKeys())
  }

  return (
    <div class={`shell env-${environment}`}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Console</span>
        <div class="env-switch" role="group" aria-label="Environment">
          {environments.map(([env, label]) => (
            <button
              type="button"
              key={env}
              aria-pressed={env === environment}
              class={`env-button env-${env}`}
              onClick={() => switchTo(env)}
            >
              {label}
              {keys[env] === undefined ? null : (
                <>
                  <span aria-hidden="true"> ●</span>
                  <span class="sr-only"> (signed in)</span>
                </>
              )}
            </button>
          ))}
        </div>
        <span class="env-label" aria-live="polite">
          {environment === "test" ? "Sandbox data: isolated from live" : "Live data: replies consume plan credit"}
        </span>
        {client === undefined ? null : (
          <button type="button" class="signout" onClick={signOut}>
            Sign out of {environment === "test" ? "sandbox" : "live"}
          </button>
        )}
      </header>
      {client === undefined ? null : (
        <nav class="side" aria-label="Main">
          <ul>
            {nav.map(([path, label]) => (
              <li key={path}>
                <a href={`#/${path}`} aria-current={(route[0] ?? "overview") === path ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" ref={main} tabIndex={-1}>
        {client === undefined ? (
          <SignIn environment={environment} onKey={signIn} key={environment} />
        ) : (
          <Route route={route} client={client} key={`${environment}:${route.join("/")}`} />
        )}
      </main>
    </div>
  )
}

const root = document.getElementById("app")!
try {
  root.textContent = "" // the boot message goes; render adds beside what is there
  render(<App />, root)
} catch (error) {
  root.textContent = `The console failed to start: ${messageOf(error)}`
}
