"""The web memory inspector: one self-contained page (no build step, nothing from a
CDN, no web fonts) that talks to the REST API with the key the operator types in. It asks
``GET /v1/me`` what the key may do (a reader gets no write actions) and which search modes
the server has; shows text before ids, ids as stored, times in the browser's locale with
the stored text in a title; names refused as sentences. Keyboard: Tab moves through every
control, ``/`` focuses search, Enter submits, Escape closes."""

INSPECTOR_HTML = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>archivist inspector</title>
<style>
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2430;--mute:#667085;--line:#e4e7ec;--acc:#3b5bdb;--ok:#2b8a3e;--warn:#e67700;--bad:#c92a2a;
--sans:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Zen Hei","PingFang SC","Hiragino Sans GB","Microsoft YaHei",sans-serif;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono","Noto Sans Mono CJK SC","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Zen Hei Mono","WenQuanYi Zen Hei","PingFang SC","Microsoft YaHei",monospace}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 var(--sans);background:var(--bg);color:var(--ink)}
header{display:flex;gap:12px;align-items:center;padding:12px 20px;background:#111827;color:#fff;flex-wrap:wrap}
header h1{font-size:16px;margin:0 12px 0 0;letter-spacing:.3px}
header input,header select{padding:6px 8px;border-radius:6px;border:1px solid #374151;background:#1f2937;color:#fff;min-width:160px}
#who{font-size:12px;padding:2px 9px;border-radius:999px;background:#374151;color:#e5e7eb}#who:empty{display:none}
#notice{max-width:1460px;margin:12px auto 0;padding:10px 14px;border-radius:8px;background:#fff5f5;border:1px solid #ffc9c9;color:#862e2e}
main{display:grid;grid-template-columns:1fr 1fr;gap:16px;padding:16px 20px;max-width:1500px;margin:auto}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;min-width:0}
section.wide{grid-column:1/-1}h2{font-size:14px;margin:0 0 10px;text-transform:uppercase;letter-spacing:.6px;color:var(--mute)}
table{width:100%;border-collapse:collapse}table.fixed{table-layout:fixed}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
th{font-weight:600;color:var(--mute);font-size:12px}tr:hover td{background:#f9fafb}
col.c-status{width:104px}col.c-conf{width:56px}col.c-prov{width:36%}col.c-v{width:40px}col.c-act{width:172px}
col.c-sec{width:104px}col.c-tok{width:64px}col.c-sel{width:92px}col.c-why{width:22%}
tr.vrow td{background:#fbfcfe}
button{white-space:nowrap;font:inherit;padding:5px 10px;border-radius:6px;border:1px solid var(--line);background:#fff;cursor:pointer}
button:disabled{opacity:.45;cursor:not-allowed}
button.primary{background:var(--acc);color:#fff;border-color:var(--acc)}button.danger{color:var(--bad)}
button:focus-visible,input:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid #91a7ff;outline-offset:1px}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;background:#eef2ff;color:var(--acc)}
.pill.committed{background:#ebfbee;color:var(--ok)}.pill.candidate{background:#fff4e6;color:var(--warn)}.pill.superseded,.pill.archived,.pill.expired{background:#f1f3f5;color:var(--mute)}
.quote{color:var(--mute);font-size:12px;margin-top:2px}.mono{font-family:var(--mono);font-size:12px}
.id{font-family:var(--mono);font-size:12px;text-transform:none;letter-spacing:normal;user-select:text;-webkit-user-select:text}
.excerpt{white-space:pre-wrap}.extractor{font-weight:600;color:var(--ink)}time{white-space:nowrap}
.bar{display:flex;align-items:center;gap:8px;margin:4px 0}.bar .name{width:130px;color:var(--mute);font-size:12px}
.bar .track{flex:1;background:#f1f3f5;border-radius:4px;height:14px;overflow:hidden}.bar .fill{display:block;height:100%;background:var(--acc)}
.bar .n{width:70px;text-align:right;font-size:12px}.row{display:flex;gap:8px;align-items:center;margin-bottom:10px}
.row input{flex:1;padding:7px 9px;border:1px solid var(--line);border-radius:6px}.muted{color:var(--mute)}
.note{background:#fff9db;border:1px solid #ffe066;color:#5c3c00;padding:6px 10px;border-radius:6px;font-size:12px;margin:0 0 10px}
.idline{display:flex;gap:8px;align-items:center;margin:0 0 6px;font-size:12px;color:var(--mute)}
.timeline{border-left:2px solid var(--line);margin:2px 0 2px 6px;padding-left:10px}.timeline>div{margin:4px 0}.expl{font-size:12px;color:var(--mute)}
#status{margin-left:auto;font-size:12px;color:#cbd5e1}
.fmt{font-family:monospace;font-size:11px;color:#b91c1c;border:1px solid #fca5a5;border-radius:3px;padding:0 2px}
</style></head><body>
<header><h1>archivist · memory inspector</h1>
<label>API key <input id="key" type="password" autocomplete="off" placeholder="ak_…"></label>
<label>User <input id="user" list="users" placeholder="user id"></label><datalist id="users"></datalist>
<label>Agent <input id="agent" value="default"></label>
<button id="load" class="primary">Load</button><span id="who" role="note"></span><span id="status" role="status" aria-live="polite"></span></header>
<div id="notice" role="alert" hidden></div>
<p id="fontNote" class="note" hidden>This browser has no font for Chinese, Japanese or Korean text, so such text shows as boxes here; the memory itself is intact. Install a CJK font (for example fonts-noto-cjk or fonts-wqy-zenhei) to read it.</p>
<main>
<section class="wide"><h2>Search</h2><form id="searchForm" class="row"><input id="q" placeholder="Search memory (press / to focus)" aria-label="search query"><button class="primary">Search</button></form><p id="searchNote" class="note" hidden>Keyword search only: this server runs without an embedder, so a fact is found only when it shares words with your query; a question by meaning finds nothing. A server searches by meaning by default; this one was started keyword-only (<span class="id">--embedder none</span>, or a store embedded by a model it was not given).</p><div id="hits"></div></section>
<section class="wide"><h2>Facts</h2><div id="facts"><span class="muted">Enter a key and a user, then Load. No key yet? <span class="id">archivist keys create --db STORE --tenant TENANT --user USER</span> prints one, for the store this server serves.</span></div></section>
<section><h2>Candidates and review</h2><div id="review"><span class="muted">—</span></div></section>
<section><h2>Context traces</h2><form id="threadForm" class="row"><input id="thread" placeholder="thread id (all threads when empty)" aria-label="thread id"><button>Filter</button></form><div id="traces"><span class="muted">—</span></div><div id="trace"></div></section>
<section><h2>Consolidation runs</h2><div id="runs"><span class="muted">—</span></div></section>
<section class="wide"><h2>Refused and held</h2><div id="refusals"><span class="muted">—</span></div></section>
</main>
<script>
const $=s=>document.querySelector(s);const ENT={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"};
const attr=t=>String(t??"").replace(/[&<>"']/g,c=>ENT[c]);
const esc=t=>attr(t).replace(/[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,c=>`<span class="fmt">\\u${c.charCodeAt(0).toString(16).padStart(4,"0")}</span>`);
// times: the browser's locale and time zone; the exact stored RFC 3339 text in the title
const FMT=new Intl.DateTimeFormat(undefined,{dateStyle:"medium",timeStyle:"short"});
const when=iso=>{if(!iso)return "";const d=new Date(iso);return isNaN(d)?esc(iso):`<time datetime="${attr(iso)}" title="${attr(iso)}">${esc(FMT.format(d))}</time>`};
// the names the API accepts: its NAME rule ^\w[\w.:@-]{0,127}$ on the path (pydantic's regex) and in Identity (Python's),
// whose two \w agree on letters, decimal digits, letter numbers (Ⅻ) and _; tests/test_inspector_browser.py compares them
const NAME=/^[\p{L}\p{Nd}\p{Nl}_][\p{L}\p{Nd}\p{Nl}_.:@-]{0,127}$/u;
const RULE="1 to 128 letters or digits (any script) and _ . : @ -, starting with a letter, a digit or _";
const charName=c=>c===" "?"a space":c==="/"?"a slash":/[\p{C}\p{Z}]/u.test(c)?`an invisible or control character (U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4,"0")})`:`“${c}”`;
function nameProblem(v,what){if(!v)return `Enter a ${what}.`;if(NAME.test(v))return "";const cs=[...v];
 if(cs.length>128)return `That ${what} is too long: ${cs.length} characters, at most 128.`;
 const i=cs.findIndex((c,j)=>!(j?/[\p{L}\p{Nd}\p{Nl}_.:@-]/u:/[\p{L}\p{Nd}\p{Nl}_]/u).test(c));
 const why=i===0&&/[.:@-]/.test(cs[0])?`it starts with ${charName(cs[0])}`:`it contains ${charName(cs[i])}`;
 return `That ${what} cannot be used: ${why}. A ${what} is ${RULE}.`}
let me=null;const canWrite=()=>!!me&&me.role!=="reader";
const READONLY="Read-only: this is a reader key, which may look but not change memory. Approving or rejecting a candidate needs a writer or admin key.";
$("#key").value=sessionStorage.getItem("archivist-key")||"";
function status(t){$("#status").textContent=t}
function notice(t){const n=$("#notice");n.textContent=t||"";n.hidden=!t;if(t)status("")}
const FIELD={user:"user id","x-agent":"agent name",x_agent:"agent name","x-project":"project name"};
function friendly(code,body,what){const d=body&&typeof body==="object"?body:{detail:String(body||"")};const detail=String(d.detail||"");
 if(code===401)return "The API key was not accepted. Paste the whole key (it starts with ak_), or ask for a new one if it was revoked.";
 if(code===403){const need=detail.match(/needs (reader|writer|admin)/);if(need)return `Your ${me?me.role:""} key may not do that: it needs a ${need[1]} key.`;
  if(/every agent/.test(detail))return "That works on the whole user, so it needs a key for every agent.";
  return "This key may not act for that user or agent. Check the user and agent, or ask for a key that lists them."}
 if(code===404)return `Not found: ${what||"that item"} is not in this memory (it may have been forgotten, or belong to another agent).`;
 if(code===409)return "Someone changed this at the same moment. Load again and retry.";
 if(code===413)return "That is larger than the server accepts.";
 if(code===422){if(d.title==="invalid request"){const f=String(((d.errors||[])[0]||{}).field||"");const w=FIELD[f.split(".").pop().toLowerCase()];
   return w?`The server refused the ${w}: a ${w} is ${RULE}.`:`The server refused the request: ${f?`“${f}” is not valid`:"it is not valid"}.`}
  return `Refused (${d.title||"invalid"}): ${detail}`}
 if(code===503)return "The memory store is busy. Try again in a moment.";
 return `The server answered ${code}${detail?`: ${detail}`:""}.`}
async function api(path,opts={},what=""){const key=$("#key").value.trim();sessionStorage.setItem("archivist-key",key);
 let r;try{r=await fetch(path,{...opts,headers:{"Authorization":"Bearer "+key,"X-Agent":/^[\x20-\x7e]*$/.test(agent())?agent():encodeURIComponent(agent()),"Content-Type":"application/json",...(opts.headers||{})}})}
 catch(e){if(!opts.quiet)notice("The server cannot be reached. Is archivist serve still running?");throw e}
 const body=r.headers.get("content-type")?.includes("json")?await r.json():await r.text();
 if(!r.ok){const m=friendly(r.status,body,what);if(!opts.quiet)notice(m);throw new Error(m)}return body}
const user=()=>$("#user").value.trim();const agent=()=>$("#agent").value.trim()||"default";const u=()=>encodeURIComponent(user());
function checkInputs(){if(!$("#key").value.trim())return "Enter an API key first (archivist keys create prints one).";
 return nameProblem(user(),"user id")||nameProblem(agent(),"agent name")}
async function loadMe(){me=await api("/v1/me");$("#who").textContent=`${me.role} key · tenant ${me.tenant}`;
 $("#who").title=me.role==="reader"?READONLY:`A ${me.role} key: it may ${me.role==="admin"?"read, write, forget users and export":"read and write"}.`;
 $("#searchNote").hidden=me.search_modes.includes("vector")}
async function loadUsers(){try{const users=await api("/v1/users",{quiet:true});$("#users").innerHTML=users.map(x=>`<option value="${attr(x)}">`).join("")}catch(e){}}
async function loadAll(){const bad=checkInputs();if(bad){notice(bad);return}notice("");status("loading…");await loadMe();
 await Promise.all([loadFacts(),loadReview(),loadTraces(),loadRuns(),loadRefusals()]);status("loaded "+user())}
async function loadRefusals(){const rs=await api(`/v1/users/${u()}/refusals?limit=100`);
 $("#refusals").innerHTML=rs.length?`<table id="refusalsTable"><tbody>${rs.map(r=>`<tr><td><span class="pill">${r.action==="reject"?"refused":"held"}</span> <b>${esc(r.code)}</b> ${esc(r.reason)}<div class="quote">${r.content?`“${esc(r.content)}”`:"(the text is not kept: only its hash)"} · ${when(r.at)}${r.message_id?` · message <span class="id">${esc(r.message_id)}</span>`:""}</div></td></tr>`).join("")}</tbody></table>`:'<span class="muted">Nothing refused or held.</span>'}
function provLine(p){return [`<span class="extractor" title="what wrote it">${esc(p.extractor||"unknown")}</span>${p.extractor_version?` <span class="muted">v${esc(p.extractor_version)}</span>`:""}`,
 esc({user_message:"from a user message",explicit:"written by the application",tool:"from a tool result",document:"from a document"}[p.source_type]||p.source_type),
 p.thread_id?`thread <span class="id">${esc(p.thread_id)}</span>`:"",p.message_id?`message <span class="id">${esc(p.message_id)}</span>`:""].filter(Boolean).join(" · ")}
const prov=f=>`<div class="prov">${provLine(f.provenance)}</div>${f.provenance.evidence_text?`<div class="quote">“${esc(f.provenance.evidence_text)}”</div>`:""}<div class="quote">recorded ${when(f.recorded_at||f.created_at)}</div>`;
async function loadFacts(){const page=await api(`/v1/users/${u()}/facts?limit=200&history=true&candidates=true`);
 $("#facts").innerHTML=page.items.length?`<table class="fixed" id="factsTable"><colgroup><col><col class="c-status"><col class="c-conf"><col class="c-prov"><col class="c-v"><col class="c-act"></colgroup><thead><tr><th>content</th><th>status</th><th>conf.</th><th>provenance</th><th>v</th><th></th></tr></thead><tbody>${page.items.map(f=>`<tr>
 <td>${esc(f.content)}${f.key?`<div class="quote">key <span class="id">${esc(f.key)}</span></div>`:""}</td><td><span class="pill ${attr(f.status)}">${esc(f.status)}</span></td><td>${f.confidence.toFixed(2)}</td>
 <td>${prov(f)}</td><td>${f.version}</td><td><button data-versions="${attr(f.id)}" aria-expanded="false">Versions</button>${f.status==="committed"?` <button class="danger" data-forget="${attr(f.id)}"${canWrite()?"":` disabled aria-disabled="true" title="${attr(READONLY)}"`}>Forget</button>`:""}</td></tr>`).join("")}</tbody></table>`
 :`<p class="muted" id="emptyFacts">No facts for ${esc(user())} (agent ${esc(agent())}) yet. Memory is written by an agent (MemoryMiddleware), <span class="id">archivist remember</span>, <span class="id">archivist learn</span> or POST /v1/users/${esc(user())}/facts; check the user and agent if you expected some.</p>`}
async function toggleVersions(b){const row=b.closest("tr"),next=row.nextElementSibling;
 if(next&&next.classList.contains("vrow")){next.remove();b.setAttribute("aria-expanded","false");return}
 const vs=await api(`/v1/users/${u()}/facts/${encodeURIComponent(b.dataset.versions)}/versions`,{},"that fact");
 const tr=document.createElement("tr");tr.className="vrow";
 tr.innerHTML=`<td colspan="6"><div class="timeline" aria-label="version timeline">${vs.map(v=>`<div><b>v${v.version}</b> ${esc(v.content)} <span class="pill ${attr(v.status)}">${esc(v.status)}</span><div class="quote">valid ${v.valid_from?when(v.valid_from):"?"} → ${v.valid_until?when(v.valid_until):"now"} · ${provLine(v.provenance)}</div></div>`).join("")}</div></td>`;
 row.after(tr);b.setAttribute("aria-expanded","true")}
async function loadReview(){const r=await api(`/v1/users/${u()}/review`);const dis=canWrite()?"":` disabled aria-disabled="true" title="${attr(READONLY)}"`;
 const c=r.candidates.map(f=>`<tr><td>${esc(f.content)}<div class="quote">${esc(f.kind)} · conf. ${f.confidence.toFixed(2)} · ${provLine(f.provenance)}</div></td>
 <td><button class="primary" data-approve="${attr(f.id)}"${dis}>Approve</button> <button class="danger" data-reject="${attr(f.id)}"${dis}>Reject</button></td></tr>`).join("");
 const k=r.conflicts.map(i=>`<tr><td>${esc(i.reason)}<div class="quote">${i.fact_ids.map(x=>`<span class="id">${esc(x)}</span>`).join(", ")} · ${when(i.created_at)}</div></td><td></td></tr>`).join("");
 const s=r.stale.map(x=>`<tr><td>${esc(x.fact.content)}<div class="quote">${esc(x.reason)}</div></td><td></td></tr>`).join("");
 const note=!canWrite()&&r.candidates.length?`<p class="note" id="readonlyNote">${esc(READONLY)}</p>`:"";
 $("#review").innerHTML=(c||k||s)?`${note}<table><tbody>${c}${k}${s}</tbody></table>`:'<span class="muted">Nothing to review.</span>'}
async function loadRuns(){const rs=await api(`/v1/users/${u()}/consolidation-runs`);$("#runs").innerHTML=rs.length?`<table><tbody>${rs.map(r=>`<tr><td>${when(r.started_at)}<div class="quote">gate: ${esc(r.trigger)} · ${Object.entries(r.plan.counts||{}).map(([k,v])=>`${esc(k)} ${esc(v)}`).join(" · ")||"nothing to do"}</div></td></tr>`).join("")}</tbody></table>`:'<span class="muted">No consolidation runs yet.</span>'}
async function loadTraces(){const th=$("#thread").value.trim();const ts=await api(`/v1/users/${u()}/traces${th?`?thread_id=${encodeURIComponent(th)}`:""}`);$("#traces").innerHTML=ts.length?`<table><tbody>${ts.map(t=>`<tr><td>${esc(t.query)}<div class="quote">${when(t.created_at)} · ${t.total_tokens}/${t.available} tokens${t.thread_id?` · thread <span class="id">${esc(t.thread_id)}</span> · call ${esc(t.call_index)}`:""}</div></td><td><button data-trace="${attr(t.id)}">Open</button></td></tr>`).join("")}</tbody></table>`:`<span class="muted">No traces${th?` in thread ${esc(th)}`:""}.</span>`}
async function openTrace(id){const t=await api(`/v1/users/${u()}/traces/${encodeURIComponent(id)}`,{},"that trace");const max=Math.max(t.available,1);
 const bars=Object.entries(t.sections).map(([n,v])=>`<div class="bar"><span class="name">${esc(n)}</span><span class="track"><span class="fill" style="width:${Math.min(100,100*v/max)}%"></span></span><span class="n">${v}</span></div>`).join("");
 const rows=t.entries.map(e=>`<tr><td>${esc(e.section)}</td><td>${e.excerpt?`<div class="excerpt">${esc(e.excerpt)}</div>`:'<div class="muted">(its text is not kept in the trace)</div>'}<div class="quote id">${esc(e.id)}</div></td><td>${e.tokens}</td><td>${e.selected?"✔ selected":"✘ dropped"}</td><td>${esc(e.reason)}${e.detail?`<div class="quote">${esc(e.detail)}</div>`:""}</td></tr>`).join("");
 $("#trace").innerHTML=`<h2 id="traceTitle" tabindex="-1">Trace</h2><div class="idline">id <code id="traceId" class="id">${esc(t.id)}</code><button data-copy="${attr(t.id)}" title="Copy the trace id">Copy id</button></div>
 <div class="expl">${esc(t.query)} · ${when(t.created_at)}${t.thread_id?` · thread <span class="id">${esc(t.thread_id)}</span> · call ${esc(t.call_index)}`:""}</div>
 <div class="expl">budget ${t.budget} − reserve ${t.reserve} = ${t.available}; used ${t.total_tokens}</div>${bars}<table class="fixed" id="entries"><colgroup><col class="c-sec"><col><col class="c-tok"><col class="c-sel"><col class="c-why"></colgroup><thead><tr><th>section</th><th>text <span class="muted">(id below)</span></th><th>tokens</th><th></th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`;$("#traceTitle").focus()}
async function copyId(b){const text=b.dataset.copy;try{await navigator.clipboard.writeText(text)}catch(e){
 const r=document.createRange();r.selectNodeContents($("#traceId"));const sel=getSelection();sel.removeAllRanges();sel.addRange(r);if(!document.execCommand("copy"))throw e}
 status("copied "+text)}
async function search(ev){ev.preventDefault();const bad=checkInputs();if(bad){notice(bad);return}notice("");if(!me)await loadMe();const q=$("#q").value;
 const hits=await api(`/v1/users/${u()}/search`,{method:"POST",body:JSON.stringify({query:q,k:10})});
 const how=me.search_modes.includes("hybrid")?"hybrid search (shared words and meaning)":"keyword search (shared words only: meaning is not searched on this server)";
 $("#hits").innerHTML=hits.length?`<p class="expl">${hits.length} found for “${esc(q)}” by ${how}.</p><table><tbody>${hits.map(h=>`<tr><td>${esc(h.fact.content)}<div class="expl">${Object.entries(h.explanation).filter(([k])=>/rank|bm25|cosine|final|contribution/.test(k)).map(([k,v])=>`${esc(k)} ${typeof v==="number"?v.toFixed(3):esc(v)}`).join(" · ")}</div></td><td>${h.score.toFixed(3)}</td></tr>`).join("")}</tbody></table>`
  :`<p class="muted" id="noResults">No results: no fact of ${esc(user())} (agent ${esc(agent())}) matches “${esc(q)}” by ${how}.</p>`}
document.addEventListener("click",async ev=>{const b=ev.target.closest("button");if(!b||b.disabled)return;
 try{if(b.dataset.versions)await toggleVersions(b);
 if(b.dataset.copy)await copyId(b);
 if((b.dataset.approve||b.dataset.reject||b.dataset.forget)&&!canWrite()){notice(READONLY);return}
 if(b.dataset.forget){if(!confirm("Forget this fact everywhere: every version, its index entries and the words it was said in? This cannot be undone."))return;await api(`/v1/users/${u()}/facts/${encodeURIComponent(b.dataset.forget)}?all_versions=true`,{method:"DELETE"},"that fact");await loadAll();status("forgotten")}
 if(b.dataset.approve){if(!confirm("Approve this fact? It becomes memory the agent uses."))return;await api(`/v1/users/${u()}/facts/${encodeURIComponent(b.dataset.approve)}/confirm`,{method:"POST"},"that candidate");await loadAll();status("approved")}
 if(b.dataset.reject){if(!confirm("Reject and forget this fact everywhere? This cannot be undone."))return;await api(`/v1/users/${u()}/facts/${encodeURIComponent(b.dataset.reject)}`,{method:"DELETE"},"that candidate");await loadAll();status("rejected and forgotten")}
 if(b.dataset.trace)await openTrace(b.dataset.trace)}catch(e){}});
const PANES={facts:"Enter a key and a user, then Load.",review:"—",traces:"—",runs:"—",refusals:"—"};
function clearData(){me=null;$("#who").textContent="";$("#hits").innerHTML="";$("#trace").innerHTML="";$("#users").innerHTML="";
 for(const [id,text] of Object.entries(PANES))$("#"+id).innerHTML=`<span class="muted">${esc(text)}</span>`;status("")}
$("#key").addEventListener("input",clearData);
// a font check: a CJK character drawn like a character no font has means there is no CJK font
function noCjkFont(){const c=document.createElement("canvas");c.width=c.height=32;const g=c.getContext("2d");
 const draw=ch=>{g.clearRect(0,0,32,32);g.font="24px "+getComputedStyle(document.body).fontFamily;g.fillText(ch,2,26);return g.getImageData(0,0,32,32).data.join()};
 return draw("\u4e2d")===draw("\ufffe")}
$("#fontNote").hidden=!noCjkFont();
$("#load").addEventListener("click",()=>{loadUsers();loadAll().catch(()=>{})});$("#searchForm").addEventListener("submit",e=>search(e).catch(()=>{}));
$("#threadForm").addEventListener("submit",e=>{e.preventDefault();const bad=checkInputs();if(bad){notice(bad);return}loadTraces().catch(()=>{})});
document.addEventListener("keydown",e=>{if(e.key==="/"&&document.activeElement.tagName!=="INPUT"){e.preventDefault();$("#q").focus()}if(e.key==="Escape"){$("#trace").innerHTML=""}});
$("#user").addEventListener("keydown",e=>{if(e.key==="Enter")$("#load").click()});
</script></body></html>
"""


def _script_hash(html: str) -> str:
    import base64
    import hashlib

    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


# The page's own script only (by its hash), its own styles, calls to its own origin, never framed.
INSPECTOR_CSP = (f"default-src 'none'; script-src '{_script_hash(INSPECTOR_HTML)}'; style-src 'unsafe-inline'; "
                 "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
