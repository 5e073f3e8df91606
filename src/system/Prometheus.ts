/** The Prometheus text exposition format of Effect's metric registry plus gauges read at scrape time. */
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"

/** One sample of a gauge read at scrape time (database counts). */
export interface GaugeSample {
  readonly name: string
  readonly help: string
  readonly labels?: Readonly<Record<string, string>>
  readonly value: number
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const labelText = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`

const numberText = (n: number | bigint) =>
  typeof n === "bigint" ? n.toString() : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : Number.isNaN(n) ? "NaN" : String(n)

interface Family {
  type: "counter" | "gauge" | "histogram"
  help: string
  lines: Array<string>
}

/** The Prometheus text format (version 0.0.4) of the registry's metrics and `gauges`. */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>, gauges: ReadonlyArray<GaugeSample>) => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string) => {
    let found = families.get(name)
    if (found === undefined) families.set(name, (found = { type, help, lines: [] }))
    return found
  }
  for (const pair of pairs) {
    const { name, tags, description } = pair.metricKey
    const labels = tags.map((t) => [t.key, t.value] as const)
    const help = description._tag === "Some" ? description.value : name
    const state = pair.metricState
    if (MetricState.isCounterState(state)) {
      family(name, "counter", help).lines.push(`${name}${labelText(labels)} ${numberText(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", help).lines.push(`${name}${labelText(labels)} ${numberText(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const lines = family(name, "histogram", help).lines
      for (const [bound, count] of state.buckets) {
        lines.push(`${name}_bucket${labelText([...labels, ["le", numberText(bound)]])} ${count}`)
      }
      lines.push(`${name}_sum${labelText(labels)} ${numberText(state.sum)}`)
      lines.push(`${name}_count${labelText(labels)} ${state.count}`)
    }
  }
  for (const gauge of gauges) {
    family(gauge.name, "gauge", gauge.help).lines.push(
      `${gauge.name}${labelText(Object.entries(gauge.labels ?? {}))} ${numberText(gauge.value)}`
    )
  }
  const out: Array<string> = []
  for (const [name, f] of families) {
    out.push(`# HELP ${name} ${escapeHelp(f.help)}`, `# TYPE ${name} ${f.type}`, ...f.lines)
  }
  return `${out.join("\n")}\n`
}
