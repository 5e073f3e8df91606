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
