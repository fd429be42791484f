/** Reading Prometheus's text format (GET /metrics), for the churn test and the faults bench. */

/** The value of a metric line (summed over its labels when `label` is unset). */
export function metricValue(text: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (label !== undefined && !rest.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
