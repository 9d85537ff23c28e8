// The official client (@mastra/client-js) on a run its memory thread queues behind a busy run: it sends the message,
// then reconnects by the run's id alone (observe), and reads both streams to their end. Prints one line once the
// thread has answered the message, then one JSON object: each stream's chunks. Run by
// tests/threads/test_queued_run_followed.py:
//   TEMPO_URL=... AGENT_ID=chat RUN_ID=... THREAD_ID=... RESOURCE_ID=... node tests/support/clients/queued_client.mjs
import { MastraClient } from '@mastra/client-js';

const client = new MastraClient({ baseUrl: process.env.TEMPO_URL });
const agent = client.getAgent(process.env.AGENT_ID);
const runId = process.env.RUN_ID;
const memory = { thread: process.env.THREAD_ID, resource: process.env.RESOURCE_ID };

async function chunksOf(response) {
  const chunks = [];
  await response.processDataStream({ onChunk: async (chunk) => { chunks.push(chunk); } });
  return chunks;
}

const started = await agent.stream(runId, { memory, runId });
console.log(JSON.stringify({ threadOutcome: started.headers.get('x-thread-outcome') }));
const observed = await agent.observe({ runId, offset: 0 });
const [sent, reconnected] = await Promise.all([chunksOf(started), chunksOf(observed)]);
console.log(JSON.stringify({ sent, observed: reconnected }));
