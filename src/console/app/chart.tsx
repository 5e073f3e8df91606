/**
 * A small bar chart per day in SVG (no library: a month of bars needs none),
 * with the figures also in a table for screen readers.
 */
export const BarChart = ({ title, days, counts }: { title: string; days: ReadonlyArray<string>; counts: ReadonlyMap<string, number> }) => {
  const width = 620
  const height = 140
  const pad = 24
  const max = Math.max(1, ...days.map((d) => counts.get(d) ?? 0))
  const slot = (width - pad) / Math.max(1, days.length)
  const total = days.reduce((sum, d) => sum + (counts.get(d) ?? 0), 0)
  return (
    <figure class="chart card">
      <figcaption>
        {title} <span class="muted">({total} this month)</span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height + 18}`} role="img" aria-label={`${title}: ${total} in all, at most ${max} a day`}>
        <line x1={pad} y1={height} x2={width} y2={height} class="axis" />
        <text x={0} y={12} class="tick">
          {max}
        </text>
        <text x={0} y={height} class="tick">
          0
        </text>
        {days.map((day, i) => {
          const value = counts.get(day) ?? 0
          const h = (value / max) * (height - 16)
          return (
            <g key={day}>
              <rect x={pad + i * slot + 1} y={height - h} width={Math.max(1, slot - 2)} height={h} class="bar">
                <title>
                  {day}: {value}
                </title>
              </rect>
              {i % 7 === 0 ? (
                <text x={pad + i * slot} y={height + 14} class="tick">
                  {day.slice(8)}
                </text>
              ) : null}
            </g>
          )
        })}
      </svg>
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
