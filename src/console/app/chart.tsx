/**
 * A bar chart per day drawn by uPlot on a canvas, with the figures also in a
 * table for screen readers (the canvas itself is one labelled image).
 */
import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"

const height = 160

/** A colour of the stylesheet's, for the canvas (which cannot read CSS variables). */
const cssColour = (element: Element, name: string, fallback: string) =>
  getComputedStyle(element).getPropertyValue(name).trim() || fallback

export const BarChart = ({
  title,
  days,
  counts,
  period = "this month"
}: {
  title: string
  days: ReadonlyArray<string>
  counts: ReadonlyMap<string, number>
  /** What the total in the caption covers. */
  period?: string
}) => {
  const max = Math.max(1, ...days.map((d) => counts.get(d) ?? 0))
  const total = days.reduce((sum, d) => sum + (counts.get(d) ?? 0), 0)
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current
    if (element === null) return undefined
    const accent = cssColour(element, "--accent", "#1f5fbf")
    const muted = cssColour(element, "--muted", "#5b6470")
    const line = cssColour(element, "--line", "#d5dae1")
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000)
    const ys = days.map((d) => counts.get(d) ?? 0)
    const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 }, font: "11px system-ui, sans-serif" }
    const plot = new uPlot(
      {
        width: Math.max(240, element.clientWidth),
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true, range: (_u, lo, hi) => [lo - 43_200, hi + 43_200] }, y: { range: [0, max] } },
        axes: [
          { ...axis, grid: { show: false }, values: "{D} {MMM}" },
          { ...axis, size: 36, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], values: (_u, ticks) => ticks.map((t) => String(t)) }
        ],
        series: [{}, { fill: accent, stroke: accent, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 24] }), points: { show: false } }]
      },
      [xs, ys],
      element
    )
    const resized = new ResizeObserver(() => plot.setSize({ width: Math.max(240, element.clientWidth), height }))
    resized.observe(element)
    return () => {
      resized.disconnect()
      plot.destroy()
    }
  }, [days, counts, max])
  return (
    <figure class="chart card">
      <figcaption>
        {title} <span class="muted">({total} {period})</span>
      </figcaption>
      <div class="plot" ref={box} role="img" aria-label={`${title}: ${total} in all, at most ${max} a day`} />
      <table class="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Count</th>
          </tr>
        </thead>
        <tbody>
          {days
            .filter((d) => (counts.get(d) ?? 0) > 0)
            .map((d) => (
              <tr key={d}>
                <td>{d}</td>
                <td>{counts.get(d)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </figure>
  )
}

/** Scores (0 to 1) at points in time as a line, drawn the same way, with its figures in a table too. */
export const ScoreChart = ({ title, points }: { title: string; points: ReadonlyArray<{ at: string; score: number }> }) => {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current
    if (element === null || points.length === 0) return undefined
    const accent = cssColour(element, "--accent", "#1f5fbf")
    const muted = cssColour(element, "--muted", "#5b6470")
    const line = cssColour(element, "--line", "#d5dae1")
    const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 }, font: "11px system-ui, sans-serif" }
    const plot = new uPlot(
      {
        width: Math.max(240, element.clientWidth),
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        legend: { show: false },
        cursor: { show: false },
        // one run alone still gets a visible span around it
        scales: { x: { time: true, range: (_u, lo, hi) => [lo - 1_800, hi + 1_800] }, y: { range: [0, 100] } },
        axes: [
          { ...axis, grid: { show: false } },
          { ...axis, size: 44, values: (_u, ticks) => ticks.map((t) => `${t}%`) }
        ],
        series: [{}, { stroke: accent, width: 2, points: { show: true, size: 6, fill: accent } }]
      },
      [points.map((p) => Date.parse(p.at) / 1000), points.map((p) => Math.round(p.score * 100))],
      element
    )
    const resized = new ResizeObserver(() => plot.setSize({ width: Math.max(240, element.clientWidth), height }))
    resized.observe(element)
    return () => {
      resized.disconnect()
      plot.destroy()
    }
  }, [points])
  const last = points[points.length - 1]
  const percent = (score: number) => `${Math.round(score * 100)}%`
  return (
    <figure class="chart card">
      <figcaption>{title}</figcaption>
      <div
        class="plot"
        ref={box}
        role="img"
        aria-label={`${title}: ${points.length} ${points.length === 1 ? "run" : "runs"}${last === undefined ? "" : `, latest ${percent(last.score)}`}`}
      />
      <table class="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Run at</th>
            <th scope="col">Score</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.at}>
              <td>{p.at}</td>
              <td>{percent(p.score)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}
