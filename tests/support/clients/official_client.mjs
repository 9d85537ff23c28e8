// Drives tempo-agents' HTTP API with the unchanged official client (@mastra/client-js, pinned in package.json)
// and prints one JSON object: what each call returned, for tests/http/test_official_client.py to check.
//   TEMPO_URL=http://127.0.0.1:4111 node tests/support/clients/official_client.mjs
// The same script runs against the reference Mastra server with REFERENCE=1: it then leaves out the steps that
// check what tempo-agents does beyond the reference (a repeated resume gets the same answer, another answer is
// refused, observing a finished run ends).
import { MastraClient } from '@mastra/client-js';

const client = new MastraClient({ baseUrl: process.env.TEMPO_URL ?? 'http://127.0.0.1:4111' });
const agent = client.getAgent('assistant');
const report = {};

async function chunksOf(responsePromise) {
  const response = await responsePromise;
  const chunks = [];
  await response.processDataStream({ onChunk: async (chunk) => { chunks.push(chunk); } });
  return chunks;
}

async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return { name: error.name, status: error.status, body: error.body };
  }
}

const brief = (chunks) => chunks.map((c) => c.type);

report.tools = Object.keys(await client.listTools());
report.toolDetails = await client.getTool('weather-tool').details();
report.executed = await client.getTool('weather-tool').execute({ data: { city: 'Oslo' } });
report.invalid = await client.getTool('weather-tool').execute({ data: { town: 'Oslo' } });
report.unknownTool = await failure(client.getTool('nope').details());
report.agents = Object.keys(await client.listAgents());
report.agentTools = Object.keys((await agent.details()).tools);
report.agentTool = (await agent.getTool('weather-tool')).id;

const weather = await chunksOf(agent.stream('What is the weather in Oslo?'));
report.weather = brief(weather);
report.weatherCall = weather.find((c) => c.type === 'tool-call')?.payload;
report.weatherMessageId = weather.find((c) => c.type === 'step-start')?.payload?.messageId ?? null;
const generated = await agent.generate('weather please');
report.generated = { text: generated.text, finishReason: generated.finishReason, toolCall: generated.toolCalls[0]?.payload };

const charge = await chunksOf(agent.stream('charge 990'));
const suspended = charge.find((c) => c.type === 'tool-call-suspended');
report.suspended = suspended?.payload ?? null;
// Listed at once, with no wait: the wait is recorded with the chunk that said so.
report.suspendedRuns = (await agent.listSuspendedRuns()).runs.map((r) => r.runId).includes(suspended?.runId);
// Invalid resume data, on a run of its own (the reference drops a run whose resume failed; ours keeps it waiting).
const other = (await chunksOf(agent.stream('charge again'))).find((c) => c.type === 'tool-call-suspended');
report.badResume = await failure(agent.resumeStream({ confirmed: 'yes' }, { runId: other.runId, toolCallId: 'call-c1' }));
const resumed = await chunksOf(agent.resumeStream({ confirmed: true }, { runId: suspended.runId, toolCallId: 'call-c1' }));
report.resumed = brief(resumed);
report.resumedResult = resumed.find((c) => c.type === 'tool-result')?.payload?.result ?? null;
const reference = process.env.REFERENCE === '1';
if (!reference) {
  // The same request again (as the client's own retries send it) gets the same answer; another answer is refused.
  report.resumeRepeat = brief(await chunksOf(agent.resumeStream({ confirmed: true }, { runId: suspended.runId, toolCallId: 'call-c1' })));
  report.resumeOther = await failure(agent.resumeStream({ confirmed: false }, { runId: suspended.runId, toolCallId: 'call-c1' }));
}

const deletion = await chunksOf(agent.stream('delete the notes'));
const approval = deletion.find((c) => c.type === 'tool-call-approval');
report.approval = approval?.payload ?? null;
report.approved = brief(await chunksOf(agent.approveToolCall({ runId: approval.runId, toolCallId: 'call-d1' })));
const second = await agent.generate('delete again');
report.secondFinish = second.finishReason;
const declined = await agent.declineToolCallGenerate({ runId: second.runId, toolCallId: 'call-d1', reason: 'no' });
report.declined = declined.finishReason;
const third = await chunksOf(agent.stream('delete once more'));
const denied = await chunksOf(agent.declineToolCall({ runId: third[0].runId, toolCallId: 'call-d1', reason: 'never' }));
report.denied = denied[0]?.payload?.approval ?? null;

// A conversation goes on while a run of its thread waits: a second stream on the thread streams a new run at once,
// and the waiting run is still listed (and answerable) afterwards.
const memory = { thread: 'ts-thread', resource: 'ts-user' };
const onThread = (await chunksOf(agent.stream('charge 5', { memory }))).find((c) => c.type === 'tool-call-suspended');
const meanwhile = await chunksOf(agent.stream('weather please', { memory }));
report.threadNext = { types: brief(meanwhile), newRun: meanwhile[0]?.runId !== onThread?.runId };
const listed = await agent.listSuspendedRuns({ threadId: 'ts-thread', resourceId: 'ts-user' });
report.threadSuspendedRuns = listed.runs.map((r) => r.runId).includes(onThread?.runId);
const later = await chunksOf(agent.resumeStream({ confirmed: true }, { runId: onThread.runId, toolCallId: 'call-c1' }));
report.threadResumed = later.find((c) => c.type === 'tool-result')?.payload?.result ?? null;

report.exploded = brief(await chunksOf(agent.stream('explode')));
report.modelError = brief(await chunksOf(agent.stream('modelerror')));
if (!reference) report.observed = brief(await chunksOf(agent.observe({ runId: weather[0].runId, offset: 0 })));
report.unknownRun = await failure(agent.resumeStream({ confirmed: true }, { runId: 'nope' }));

console.log(JSON.stringify(report));
