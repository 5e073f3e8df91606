/** Shared pieces: data loading with its three states, form fields with labels, a two-step delete. */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiFailure, type Page } from "./api.js"

export interface Resource<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

/** Loads with `load` when `deps` change; `reload` runs it again keeping the data shown meanwhile. */
export const useResource = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Resource<A> => {
  const [state, setState] = useState<{ data: A | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true
  })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false }))
    )
    return () => {
      live = false
    }
  }, [...deps, round])
  const reload = useCallback(() => setRound((r) => r + 1), [])
  return { ...state, reload }
}

/** Runs `tick` every `millis` while `active`, without piling calls up. */
export const usePolling = (active: boolean, millis: number, tick: () => Promise<unknown> | void) => {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    if (!active) return
    let stopped = false
    let timer: ReturnType<typeof setTimeout>
    const loop = async () => {
      try {
        await latest.current()
      } finally {
        if (!stopped) timer = setTimeout(loop, millis)
      }
    }
    timer = setTimeout(loop, millis)
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [active, millis])
}

export const messageOf = (error: unknown): string =>
  error instanceof ApiFailure ? error.message : error instanceof Error ? error.message : String(error)

export const Loading = ({ what }: { what: string }) => (
  <p class="loading" role="status">
    Loading {what}…
  </p>
)

export const ErrorBox = ({ error, retry }: { error: unknown; retry?: () => void }) => (
  <div class="error" role="alert">
    <p>
      <strong>Error:</strong> {messageOf(error)}
      {error instanceof ApiFailure && error.requestId !== undefined ? <span class="muted"> ({error.requestId})</span> : null}
    </p>
    {retry === undefined ? null : (
      <button type="button" onClick={retry}>
        Try again
      </button>
    )}
  </div>
)

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="empty">{children}</p>

/** What a resource shows: loading at first, the error (with retry), or `children(data)`. */
export const Loaded = <A,>({
  resource,
  what,
  children
}: {
  resource: Resource<A>
  what: string
  children: (data: A) => ComponentChildren
}) => {
  if (resource.data === undefined && resource.error === undefined) return <Loading what={what} />
  return (
    <>
      {resource.error === undefined ? null : <ErrorBox error={resource.error} retry={resource.reload} />}
      {resource.data === undefined ? null : children(resource.data)}
    </>
  )
}

let fieldCount = 0
const useId = (prefix: string) => {
  const ref = useRef<string | undefined>(undefined)
  if (ref.current === undefined) ref.current = `${prefix}-${++fieldCount}`
  return ref.current
}

interface FieldProps {
  readonly label: string
  readonly value: string
  readonly onInput: (value: string) => void
  readonly hint?: string
  readonly required?: boolean
  readonly type?: string
  readonly multiline?: number
  readonly placeholder?: string
  readonly name?: string
}

export const Field = (props: FieldProps) => {
  const id = useId("f")
  const hint = props.hint === undefined ? undefined : `${id}-hint`
  const common = {
    id,
    name: props.name,
    value: props.value,
    required: props.required,
    placeholder: props.placeholder,
    "aria-describedby": hint,
    onInput: (e: Event) => props.onInput((e.currentTarget as HTMLInputElement).value)
  }
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.multiline === undefined ? (
        <input type={(props.type ?? "text") as "text"} {...common} />
      ) : (
        <textarea rows={props.multiline} {...common} />
      )}
      {hint === undefined ? null : (
        <small id={hint} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  )
}

export const Select = (props: {
  label: string
  value: string
  options: ReadonlyArray<readonly [string, string]>
  onChange: (value: string) => void
}) => {
  const id = useId("s")
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
        {props.options.map(([value, text]) => (
          <option value={value} key={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}

/** A destructive action asks once more, inline (keyboard and screen readers reach both buttons). */
export const ConfirmButton = ({
  label,
  confirm,
  onConfirm,
  what
}: {
  label: string
  confirm: string
  onConfirm: () => void
  /** Added to the button's accessible name where several stand side by side (a list's rows). */
  what?: string
}) => {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) yes.current?.focus()
  }, [asking])
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)} aria-label={what === undefined ? undefined : `${label}: ${what}`}>
        {label}
      </button>
    )
  }
  return (
    <span class="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>
      <button
        type="button"
        class="danger"
        ref={yes}
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

const memberKey = "console.member"

/**
 * The member id the tab's replies and changes are recorded under (`Service-Member-Id`), kept in the tab; the
 * ticket's page and a handed-off conversation's page share it.
 */
export const useMember = () => {
  const [member, setMember] = useState(sessionStorage.getItem(memberKey) ?? "console")
  const headers: Record<string, string> = member.trim() === "" ? {} : { "service-member-id": member.trim() }
  return [
    member,
    (value: string) => {
      sessionStorage.setItem(memberKey, value)
      setMember(value)
    },
    headers
  ] as const
}

/** Runs an action, keeping its pending state and its error for display. */
export const useAction = () => {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setPending(true)
    setError(undefined)
    try {
      await action()
      return true
    } catch (e) {
      setError(e)
      return false
    } finally {
      setPending(false)
    }
  }
  return { pending, error, run, clear: () => setError(undefined) }
}

export const when = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { timeZone: "UTC" }) + " UTC"
}

export const Status = ({ value }: { value: string }) => <span class={`badge badge-${value}`}>{value.replace(/_/g, " ")}</span>

/** A secret the service shows once: its value, a copy button, and a button to put it away. */
export const CopySecret = ({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) => {
  const [copied, setCopied] = useState<boolean | undefined>(undefined)
  return (
    <div class="card secret" role="region" aria-label={label}>
      <p>
        <strong>{label}:</strong> <code>{secret}</code>
      </p>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard === undefined
            ? setCopied(false)
            : navigator.clipboard.writeText(secret).then(() => setCopied(true), () => setCopied(false))
        }
      >
        Copy
      </button>{" "}
      <button type="button" onClick={onDone}>
        I saved it
      </button>
      <span role="status">{copied === undefined ? "" : copied ? " Copied." : " Copying was refused: select the text instead."}</span>
    </div>
  )
}

/**
 * Rows per page of the console's lists: the contract's largest page unless the
 * tab sets `console.page-size` in session storage (a smaller page for tests).
 */
export const pageSize = (): string => {
  const set = Number(sessionStorage.getItem("console.page-size"))
  return Number.isInteger(set) && set >= 1 && set <= 100 ? String(set) : "100"
}

export interface PagedResource<A> extends Resource<Page<A>> {
  /** Fetches the page after the last one shown (`starting_after` the cursor) and appends its rows. */
  readonly more: () => void
  readonly loadingMore: boolean
  readonly moreError: unknown
}

/**
 * A cursor-paginated list: `load(limit, startingAfter)` fetches one page; the
 * first loads when `deps` change, the next ones on `more()`. A reload starts
 * again from the first page.
 */
export const usePagedList = <A,>(
  load: (limit: string, startingAfter: string | undefined) => Promise<Page<A>>,
  deps: ReadonlyArray<unknown>
): PagedResource<A> => {
  const first = useResource(() => load(pageSize(), undefined), deps)
  const [extra, setExtra] = useState<{ after: Page<A> | undefined; pages: ReadonlyArray<Page<A>> }>({ after: undefined, pages: [] })
  const action = useAction()
  // pages fetched after an older first page (before a reload) are dropped
  const pages = extra.after !== undefined && extra.after === first.data ? extra.pages : []
  const last = pages.at(-1) ?? first.data
  const more = () => {
    const cursor = last?.hasMore === true ? last.nextCursor : null
    if (cursor === null || action.pending) return
    const base = first.data
    void action.run(async () => {
      const next = await load(pageSize(), cursor)
      setExtra({ after: base, pages: [...pages, next] })
    })
  }
  const data =
    first.data === undefined || last === undefined
      ? undefined
      : { data: [first.data.data, ...pages.map((p) => p.data)].flat(), hasMore: last.hasMore, nextCursor: last.nextCursor }
  return { ...first, data, more, loadingMore: action.pending, moreError: action.error }
}

/** The "Load more" button under a paged list, shown while the service says more rows follow. */
export const LoadMore = ({ list, what }: { list: PagedResource<unknown>; what: string }) =>
  list.data === undefined || (!list.data.hasMore && list.moreError === undefined) ? null : (
    <div class="load-more">
      {list.data.hasMore ? (
        <button type="button" onClick={list.more} disabled={list.loadingMore} aria-label={`Load more ${what}`}>
          {list.loadingMore ? "Loading…" : "Load more"}
        </button>
      ) : null}
      <span role="status" class="muted small">
        {list.data.data.length} {what} shown
      </span>
      {list.moreError === undefined ? null : <ErrorBox error={list.moreError} retry={list.more} />}
    </div>
  )

/** A snippet to paste into a site, and a button that copies it. */
export const Snippet = ({ id, text, rows }: { id: string; text: string; rows: number }) => {
  const [copied, setCopied] = useState(false)
  return (
    <>
      <label for={id}>Embed snippet</label>
      <textarea id={id} readOnly rows={rows} value={text} />
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard?.writeText(text).catch(() => undefined)
          setCopied(true)
        }}
      >
        Copy snippet
      </button>
      <span role="status" class="saved">
        {copied ? "Copied." : ""}
      </span>
    </>
  )
}
