import { lazy, Suspense } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { q } from './lib/queries';
import { Layout } from './components/Layout';
import { Loading } from './components/Loading';
import { ErrorView } from './components/ErrorView';
import { SignIn } from './pages/SignIn';
import { ForgotPassword } from './pages/ForgotPassword';
import { ResetPassword } from './pages/ResetPassword';
import { Overview } from './pages/Overview';
import { MeProvider } from './lib/me';
import { RateLimitBanner } from './components/RateLimitBanner';

// Pages beyond the overview load on first use: the first visit downloads only what it shows.
const MonitorList = lazy(() => import('./pages/MonitorList'));
const MonitorDetail = lazy(() => import('./pages/MonitorDetail'));
const MonitorEdit = lazy(() => import('./pages/MonitorEdit'));
const IncidentList = lazy(() => import('./pages/IncidentList'));
const IncidentDetail = lazy(() => import('./pages/IncidentDetail'));
const NotFound = lazy(() => import('./pages/NotFound'));
const OnCall = lazy(() => import('./pages/OnCall'));
const Maintenance = lazy(() => import('./pages/Maintenance'));
const MaintenanceEdit = lazy(() => import('./pages/MaintenanceEdit'));
const Channels = lazy(() => import('./pages/Channels'));
const Hosts = lazy(() => import('./pages/Hosts'));
const Settings = lazy(() => import('./pages/settings/Settings'));
const Search = lazy(() => import('./pages/Search'));
const HostDetail = lazy(() => import('./pages/HostDetail'));
const ScheduleEdit = lazy(() => import('./pages/ScheduleEdit'));
const PolicyEdit = lazy(() => import('./pages/PolicyEdit'));

/** Pages anyone may open, signed in or not. */
const PUBLIC = ['/sign-in', '/forgot-password', '/reset-password'];

export function App() {
  const me = useQuery(q.me());
  const location = useLocation();
  if (PUBLIC.includes(location.pathname)) {
    return (
      <>
        <div className="banners"><RateLimitBanner /></div>
        <Routes>
          <Route path="/sign-in" element={<SignIn />} />
          <Route path="/forgot-password" element={<ForgotPassword />} />
          <Route path="/reset-password" element={<ResetPassword />} />
        </Routes>
      </>
    );
  }
  if (me.isPending) return <><div className="banners"><RateLimitBanner /></div><Loading label="Loading Vigil" /></>;
  if (me.isError) return <main><div className="banners"><RateLimitBanner /></div><ErrorView error={me.error} retry={() => void me.refetch()} /></main>;
  if (!me.data) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return (
    <MeProvider me={me.data}>
      <Layout>
        <Suspense fallback={<Loading label="Loading the page" />}>
          <Routes>
            <Route path="/" element={<Overview />} />
            <Route path="/monitors" element={<MonitorList />} />
            <Route path="/monitors/new" element={<MonitorEdit />} />
            <Route path="/monitors/:id" element={<MonitorDetail />} />
            <Route path="/monitors/:id/edit" element={<MonitorEdit />} />
            <Route path="/incidents" element={<IncidentList />} />
            <Route path="/incidents/:id" element={<IncidentDetail />} />
            <Route path="/on-call" element={<OnCall />} />
            <Route path="/on-call/schedules/new" element={<ScheduleEdit />} />
            <Route path="/on-call/schedules/:id/edit" element={<ScheduleEdit />} />
            <Route path="/on-call/policies/new" element={<PolicyEdit />} />
            <Route path="/on-call/policies/:id/edit" element={<PolicyEdit />} />
            <Route path="/maintenance" element={<Maintenance />} />
            <Route path="/maintenance/new" element={<MaintenanceEdit />} />
            <Route path="/maintenance/:id/edit" element={<MaintenanceEdit />} />
            <Route path="/channels" element={<Channels />} />
            <Route path="/hosts" element={<Hosts />} />
            <Route path="/settings/*" element={<Settings />} />
            <Route path="/search" element={<Search />} />
            <Route path="/hosts/:id" element={<HostDetail />} />
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </Layout>
    </MeProvider>
  );
}
