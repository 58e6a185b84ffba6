"""The web memory inspector: one self-contained page (no build step, nothing from a
CDN) that talks to the REST API with the key the operator types in. Keyboard: Tab
moves through every control, ``/`` focuses search, Enter submits, Escape closes."""

INSPECTOR_HTML = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>archivist inspector</title>
<style>
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2430;--mute:#667085;--line:#e4e7ec;--acc:#3b5bdb;--ok:#2b8a3e;--warn:#e67700;--bad:#c92a2a}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans SC",sans-serif;background:var(--bg);color:var(--ink)}
header{display:flex;gap:12px;align-items:center;padding:12px 20px;background:#111827;color:#fff;flex-wrap:wrap}
header h1{font-size:16px;margin:0 12px 0 0;letter-spacing:.3px}
header input,header select{padding:6px 8px;border-radius:6px;border:1px solid #374151;background:#1f2937;color:#fff;min-width:160px}
main{display:grid;grid-template-columns:1fr 1fr;gap:16px;padding:16px 20px;max-width:1500px;margin:auto}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;min-width:0}
section.wide{grid-column:1/-1}h2{font-size:14px;margin:0 0 10px;text-transform:uppercase;letter-spacing:.6px;color:var(--mute)}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--mute);font-size:12px}tr:hover td{background:#f9fafb}
button{font:inherit;padding:5px 10px;border-radius:6px;border:1px solid var(--line);background:#fff;cursor:pointer}
button.primary{background:var(--acc);color:#fff;border-color:var(--acc)}button.danger{color:var(--bad)}
button:focus-visible,input:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid #91a7ff;outline-offset:1px}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;background:#eef2ff;color:var(--acc)}
.pill.committed{background:#ebfbee;color:var(--ok)}.pill.candidate{background:#fff4e6;color:var(--warn)}.pill.superseded,.pill.archived,.pill.expired{background:#f1f3f5;color:var(--mute)}
.quote{color:var(--mute);font-size:12px;margin-top:2px}.mono{font-family:ui-monospace,Menlo,monospace;font-size:12px}
.bar{display:flex;align-items:center;gap:8px;margin:4px 0}.bar .name{width:130px;color:var(--mute);font-size:12px}
.bar .track{flex:1;background:#f1f3f5;border-radius:4px;height:14px;overflow:hidden}.bar .fill{height:100%;background:var(--acc)}
.bar .n{width:70px;text-align:right;font-size:12px}.row{display:flex;gap:8px;align-items:center;margin-bottom:10px}
.row input{flex:1;padding:7px 9px;border:1px solid var(--line);border-radius:6px}.muted{color:var(--mute)}
.timeline{border-left:2px solid var(--line);margin:6px 0 0 6px;padding-left:10px}.expl{font-size:12px;color:var(--mute)}
#status{margin-left:auto;font-size:12px;color:#cbd5e1}
.fmt{font-family:monospace;font-size:11px;color:#b91c1c;border:1px solid #fca5a5;border-radius:3px;padding:0 2px}
</style></head><body>
<header><h1>archivist · memory inspector</h1>
<label>API key <input id="key" type="password" autocomplete="off" placeholder="ak_…"></label>
<label>User <input id="user" list="users" placeholder="user id"></label><datalist id="users"></datalist>
<label>Agent <input id="agent" value="default"></label>
<button id="load" class="primary">Load</button><span id="status" role="status" aria-live="polite"></span></header>
<main>
<section class="wide"><h2>Search</h2><form id="searchForm" class="row"><input id="q" placeholder="Search memory (press / to focus)" aria-label="search query"><button class="primary">Search</button></form><div id="hits"></div></section>
<section class="wide"><h2>Facts</h2><div id="facts" class="muted">Enter a key and a user, then Load.</div></section>
<section><h2>Candidates and review</h2><div id="review" class="muted">—</div></section>
<section><h2>Context traces</h2><form id="threadForm" class="row"><input id="thread" placeholder="thread id (all threads when empty)" aria-label="thread id"><button>Filter</button></form><div id="traces" class="muted">—</div><div id="trace"></div></section>
<section><h2>Consolidation runs</h2><div id="runs" class="muted">—</div></section>
</main>
<script>
const $=s=>document.querySelector(s);const esc=t=>String(t??"").replace(/[&<>"']/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c])).replace(/[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,c=>`<span class="fmt">\\u${c.charCodeAt(0).toString(16).padStart(4,"0")}</span>`);
$("#key").value=sessionStorage.getItem("archivist-key")||"";
function status(t){$("#status").textContent=t}
async function api(path,opts={}){const key=$("#key").value.trim();sessionStorage.setItem("archivist-key",key);
 const r=await fetch(path,{...opts,headers:{"Authorization":"Bearer "+key,"X-Agent":$("#agent").value||"default","Content-Type":"application/json",...(opts.headers||{})}});
 const body=r.headers.get("content-type")?.includes("json")?await r.json():await r.text();
 if(!r.ok){status(`${r.status}: ${body.detail||body.title||body}`);throw new Error(body.detail||r.status)}return body}
const u=()=>encodeURIComponent($("#user").value.trim());
async function loadUsers(){try{const users=await api("/v1/users");$("#users").innerHTML=users.map(x=>`<option value="${esc(x)}">`).join("")}catch(e){}}
async function loadAll(){if(!u()){status("choose a user");return}status("loading…");await Promise.all([loadFacts(),loadReview(),loadTraces(),loadRuns()]);status("loaded "+decodeURIComponent(u()))}
async function loadFacts(){const page=await api(`/v1/users/${u()}/facts?limit=200&history=true&candidates=true`);
 $("#facts").innerHTML=page.items.length?`<table><thead><tr><th>content</th><th>status</th><th>conf.</th><th>provenance</th><th>v</th><th></th></tr></thead><tbody>${page.items.map(f=>`<tr>
 <td>${esc(f.content)}${f.key?`<div class="quote mono">key ${esc(f.key)}</div>`:""}</td><td><span class="pill ${f.status}">${f.status}</span></td><td>${f.confidence.toFixed(2)}</td>
 <td><div>${esc(f.provenance.source_type)}${f.provenance.message_id?` · msg <span class="mono">${esc(f.provenance.message_id)}</span>`:""}</div>${f.provenance.evidence_text?`<div class="quote">“${esc(f.provenance.evidence_text)}”</div>`:""}</td>
 <td>${f.version}</td><td><button data-versions="${esc(f.id)}">Versions</button><div id="v-${esc(f.id)}"></div></td></tr>`).join("")}</tbody></table>`:'<span class="muted">No facts.</span>'}
async function showVersions(id){const box=$("#v-"+CSS.escape(id));const vs=await api(`/v1/users/${u()}/facts/${id}/versions`);
 box.innerHTML=`<div class="timeline">${vs.map(v=>`<div><b>v${v.version}</b> ${esc(v.content)}<div class="quote">valid ${esc(v.valid_from||"?")} → ${esc(v.valid_until||"now")} · ${v.status}</div></div>`).join("")}</div>`}
async function loadReview(){const r=await api(`/v1/users/${u()}/review`);const c=r.candidates.map(f=>`<tr><td>${esc(f.content)}<div class="quote">${esc(f.kind)} · conf. ${f.confidence.toFixed(2)}</div></td>
 <td><button class="primary" data-approve="${esc(f.id)}">Approve</button> <button class="danger" data-reject="${esc(f.id)}">Reject</button></td></tr>`).join("");
 const k=r.conflicts.map(i=>`<tr><td>${esc(i.reason)}<div class="quote mono">${i.fact_ids.map(esc).join(", ")}</div></td><td></td></tr>`).join("");
 const s=r.stale.map(x=>`<tr><td>${esc(x.fact.content)}<div class="quote">${esc(x.reason)}</div></td><td></td></tr>`).join("");
 $("#review").innerHTML=(c||k||s)?`<table><tbody>${c}${k}${s}</tbody></table>`:'<span class="muted">Nothing to review.</span>'}
async function loadRuns(){const rs=await api(`/v1/users/${u()}/consolidation-runs`);$("#runs").innerHTML=rs.length?`<table><tbody>${rs.map(r=>`<tr><td>${esc(r.started_at)}<div class="quote">gate: ${esc(r.trigger)} · ${Object.entries(r.plan.counts||{}).map(([k,v])=>`${esc(k)} ${v}`).join(" · ")||"nothing to do"}</div></td></tr>`).join("")}</tbody></table>`:'<span class="muted">No consolidation runs yet.</span>'}
async function loadTraces(){const th=$("#thread").value.trim();const ts=await api(`/v1/users/${u()}/traces${th?`?thread_id=${encodeURIComponent(th)}`:""}`);$("#traces").innerHTML=ts.length?`<table><tbody>${ts.map(t=>`<tr><td>${esc(t.query)}<div class="quote">${esc(t.created_at)} · ${t.total_tokens}/${t.available} tokens${t.thread_id?` · thread ${esc(t.thread_id)} · call ${esc(t.call_index)}`:""}</div></td><td><button data-trace="${esc(t.id)}">Open</button></td></tr>`).join("")}</tbody></table>`:'<span class="muted">No traces.</span>'}
async function openTrace(id){const t=await api(`/v1/users/${u()}/traces/${id}`);const max=Math.max(t.available,1);
 const bars=Object.entries(t.sections).map(([n,v])=>`<div class="bar"><span class="name">${esc(n)}</span><span class="track"><span class="fill" style="width:${Math.min(100,100*v/max)}%"></span></span><span class="n">${v}</span></div>`).join("");
 const rows=t.entries.map(e=>`<tr><td>${esc(e.section)}</td><td class="mono">${esc(e.id)}</td><td>${e.tokens}</td><td>${e.selected?"✔ selected":"✘ dropped"}</td><td>${esc(e.reason)}${e.excerpt?`<div class="quote">“${esc(e.excerpt)}”</div>`:""}${e.detail?`<div class="quote">${esc(e.detail)}</div>`:""}</td></tr>`).join("");
 $("#trace").innerHTML=`<h2 id="traceTitle" tabindex="-1">Trace ${esc(t.id)}</h2><div class="expl">budget ${t.budget} − reserve ${t.reserve} = ${t.available}; used ${t.total_tokens}</div>${bars}<table><thead><tr><th>section</th><th>id</th><th>tokens</th><th></th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`;$("#traceTitle").focus()}
async function search(ev){ev.preventDefault();const hits=await api(`/v1/users/${u()}/search`,{method:"POST",body:JSON.stringify({query:$("#q").value,k:10})});
 $("#hits").innerHTML=hits.length?`<table><tbody>${hits.map(h=>`<tr><td>${esc(h.fact.content)}<div class="expl">${Object.entries(h.explanation).filter(([k])=>/rank|bm25|cosine|final|contribution/.test(k)).map(([k,v])=>`${esc(k)} ${typeof v==="number"?v.toFixed(3):esc(v)}`).join(" · ")}</div></td><td>${h.score.toFixed(3)}</td></tr>`).join("")}</tbody></table>`:'<span class="muted">No results.</span>'}
document.addEventListener("click",async ev=>{const b=ev.target.closest("button");if(!b)return;
 try{if(b.dataset.versions)await showVersions(b.dataset.versions);
 if(b.dataset.approve){if(!confirm("Approve this fact? It becomes memory the agent uses."))return;await api(`/v1/users/${u()}/facts/${b.dataset.approve}/confirm`,{method:"POST"});await loadAll();status("approved")}
 if(b.dataset.reject){if(!confirm("Reject and forget this fact everywhere? This cannot be undone."))return;await api(`/v1/users/${u()}/facts/${b.dataset.reject}`,{method:"DELETE"});await loadAll();status("rejected and forgotten")}
 if(b.dataset.trace)await openTrace(b.dataset.trace)}catch(e){}});
$("#load").addEventListener("click",()=>{loadUsers();loadAll().catch(()=>{})});$("#searchForm").addEventListener("submit",e=>search(e).catch(()=>{}));
$("#threadForm").addEventListener("submit",e=>{e.preventDefault();loadTraces().catch(()=>{})});
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
