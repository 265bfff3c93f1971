import { Suspense } from 'react';
import { Navigate, NavLink, Route, Routes } from 'react-router';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import NotFound from '../NotFound';
import { SECTIONS } from './sections';

/** Settings: one navigation over the sections (sections.ts) the caller may use, each at /settings/<path>. */
export default function Settings() {
  const { me } = useMe();
  const shown = SECTIONS.filter((s) => !s.shown || s.shown(me));
  return (
    <div className="settings">
      <nav aria-label="Settings" className="subnav">
        <h1>Settings</h1>
        <ul>
          {shown.map((s) => <li key={s.path}><NavLink to={`/settings/${s.path}`}>{s.title}</NavLink></li>)}
        </ul>
      </nav>
      <div className="section">
        <Suspense fallback={<Loading label="Loading the page" />}>
          <Routes>
            {shown[0] && <Route index element={<Navigate to={`/settings/${shown[0].path}`} replace />} />}
            {shown.map((s) => <Route key={s.path} path={`${s.path}/*`} element={<s.page />} />)}
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </div>
    </div>
  );
}
