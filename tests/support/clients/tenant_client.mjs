// Drives tempo-agents' HTTP API with the unchanged official client as one tenant's principal, naming its own run
// (MINE) and another tenant's (THEIRS), and prints one JSON object for tests/http/test_tenants.py to check.
//   TEMPO_URL=http://127.0.0.1:4111 TEMPO_TOKEN=... MINE=... THEIRS=... node tests/support/clients/tenant_client.mjs
import { MastraClient } from '@mastra/client-js';

const client = new MastraClient({
  baseUrl: process.env.TEMPO_URL,
  headers: { Authorization: `Bearer ${process.env.TEMPO_TOKEN}` },
  retries: 0,
});
const agent = client.getAgent('assistant');
const report = {};

async function failure(promise) {
  try {
    const response = await promise;
    if (response && typeof response.processDataStream === 'function') {
      await response.processDataStream({ onChunk: async () => {} });
    }
    return null;
  } catch (error) {
    return { name: error.name, status: error.status, body: error.body };
  }
}

report.suspended = (await agent.listSuspendedRuns()).runs.map((r) => r.runId);
for (const [name, runId] of [['Theirs', process.env.THEIRS], ['Missing', 'no-such-run']]) {
  report[`resume${name}`] = await failure(agent.resumeStream({ confirmed: true }, { runId, toolCallId: 'call-c1' }));
  report[`observe${name}`] = await failure(agent.observe({ runId, offset: 0 }));
  report[`approve${name}`] = await failure(agent.approveToolCall({ runId, toolCallId: 'call-c1' }));
}
report.startTheirs = await failure(agent.generate('hello', { memory: { thread: 't', resource: 'globex' } }));
console.log(JSON.stringify(report));
